package jsonstrict

// A caller that keeps only some members of a text, as they are written
// (the AOS endpoint: a request's id, method and params, and the raw text of
// params' members), walks it with a Parser: Peek at the next value, then
// Value, Object (with the spans of its members) or a walk of an object or
// array, and End. The key rules apply to every object, walked or built.

// Pos is the offset of the parser in the text.
func (p *Parser) Pos() int { return p.i }

// Peek skips whitespace and returns the byte the next value starts with, 0
// at the end of the text.
func (p *Parser) Peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// Value parses the value at the parser's position.
func (p *Parser) Value() (any, error) { return p.value() }

// Object parses the object at the parser's position (Peek returns '{').
// With spans non-nil, it appends the span of every member's value to
// *spans.
func (p *Parser) Object(spans *[]Span) (map[string]any, error) {
	if c := p.Peek(); c != '{' {
		return nil, p.fail("invalid character %q looking for beginning of object", c)
	}
	return p.object(spans)
}

// Span is the raw text [Start:End] of the value of an object member.
type Span struct {
	Key        string
	Start, End int
}

// End checks that only whitespace follows the value just parsed; the text
// being JSON, it then reports the first ambiguity found, if any.
func (p *Parser) End() error {
	if err := p.rest(); err != nil {
		return err
	}
	if p.amb != nil {
		return p.amb
	}
	return nil
}

// rest checks that only whitespace is left.
func (p *Parser) rest() error {
	p.ws()
	if p.i < len(p.s) {
		return p.fail("invalid character %q after top-level value", p.s[p.i])
	}
	return nil
}

// WalkObject parses the object at the parser's position (Peek returns '{')
// without building it: for each member, it applies the key rules and
// calls member with the key, at the member's value, which member must
// parse (with Value, Object or a walk). An error member returns ends the
// walk and is returned.
func (p *Parser) WalkObject(member func(key string) error) error {
	if c := p.Peek(); c != '{' {
		return p.fail("invalid character %q looking for beginning of object", c)
	}
	empty, err := p.openObject()
	if err != nil || empty {
		return err
	}
	kmark := len(p.keys)
	var folded map[string]int
	for more := true; more; {
		k, err := p.member(kmark, &folded)
		if err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		if more, err = p.next('}'); err != nil {
			return err
		}
	}
	keys := p.keys[kmark:]
	clear(keys)
	p.keys = p.keys[:kmark]
	return nil
}

// WalkArray parses the array at the parser's position (Peek returns '[')
// without building it: elem is called at each element, which it must
// parse. The elements are paths of their own in errors, as top-level
// values are (the requests of a JSON-RPC batch). An error elem returns
// ends the walk and is returned.
func (p *Parser) WalkArray(elem func() error) error {
	if c := p.Peek(); c != '[' {
		return p.fail("invalid character %q looking for beginning of array", c)
	}
	if err := p.enter(); err != nil {
		return err
	}
	p.i++
	if p.Peek() == ']' {
		p.i++
		p.depth--
		return nil
	}
	for {
		p.ws()
		if err := elem(); err != nil {
			return err
		}
		if more, err := p.next(']'); !more || err != nil {
			return err
		}
	}
}
