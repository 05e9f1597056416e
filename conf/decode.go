// Package conf decodes the sections of warden's configuration file. Each
// feature declares its section as a typed struct (yaml tags name the keys,
// other tags bound the values) with its defaults and a Validate method, in
// its own package; conf decodes a section strictly — an unknown key, a
// value of the wrong type or outside its bounds is an error at its line —
// and reports every problem at once as "file:line: path: message".
//
// Field types and tags:
//
//   - string; `oneof:"a|b"` limits the values, `conf:"env"` expands ${VAR}s
//     (ExpandEnv) and `conf:"url"` wants an http(s) URL with a host.
//   - bool (true or false), int, int64 and float64 (`range:"1..1000"`, either
//     end may be left open), time.Duration (`range:"100ms..1h"`; with
//     `conf:"days"` a whole number of days such as 30d too) and Bytes, a
//     size such as 8MiB (`range:"1KiB.."`).
//   - pointers to those (nil when the key is absent), slices, maps with
//     string keys, and nested structs; a field of a type with a method
//     UnmarshalConf(*yaml.Node) error decodes itself.
//   - a scalar where a list is expected is a list of one when the field has
//     `conf:"one"`.
//   - a key whose field has `conf:"required"` must be present ("missing
//     url" at the mapping's line), whether or not its value decodes.
//
// After decoding, a section (or nested struct) with a Validate() error
// method is validated; FieldError and Errorf place its errors at the line of
// the field they name.
package conf

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Unmarshaler is a field type that decodes its own node. A returned
// FieldError names a key below the node; any other error is placed at the
// node.
type Unmarshaler interface {
	UnmarshalConf(n *yaml.Node) error
}

// Validator is a section, or a struct in one, that checks itself once
// decoded (rules that span fields, required keys).
type Validator interface {
	Validate() error
}

// FieldError is a problem with one field of a section, named by its path
// below the section ("batch", "defer.max_per_session"; "" for the section
// itself). Decode prints it at that field's line.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Errorf returns a FieldError for field.
func Errorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

var (
	durationType  = reflect.TypeOf(time.Duration(0))
	bytesType     = reflect.TypeOf(Bytes(0))
	unmarshalType = reflect.TypeOf((*Unmarshaler)(nil)).Elem()
	validatorType = reflect.TypeOf((*Validator)(nil)).Elem()
)

// Decode decodes n, the value of the section named path ("limits",
// "acs"), into dst, a pointer to the section's struct holding its defaults:
// keys that are absent keep them. file names the file in the errors.
func Decode(file, path string, n *yaml.Node, dst any) ErrorList {
	d := &decoder{file: file, nodes: map[string]*yaml.Node{path: n}}
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		panic("conf.Decode: dst must be a non-nil pointer")
	}
	d.value(path, n, v.Elem(), "")
	return d.errs
}

type decoder struct {
	file  string
	errs  ErrorList
	nodes map[string]*yaml.Node // path → node, to place Validate's errors
}

func (d *decoder) add(n *yaml.Node, path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	d.errs = append(d.errs, Error{File: d.file, Line: n.Line, Column: n.Column, Msg: msg})
}

// value decodes n into v; tag holds the field's conf-related struct tags.
func (d *decoder) value(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalType) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if err := v.Addr().Interface().(Unmarshaler).UnmarshalConf(n); err != nil {
			d.located(path, n, err)
		}
		return
	}
	t := v.Type()
	switch {
	case t == durationType:
		d.duration(path, n, v, tag)
		return
	case t == bytesType:
		d.bytes(path, n, v, tag)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		e := reflect.New(t.Elem())
		before := len(d.errs)
		d.value(path, n, e.Elem(), tag)
		if len(d.errs) == before {
			v.Set(e)
		}
	case reflect.Struct:
		d.structure(path, n, v)
	case reflect.Map:
		d.mapping(path, n, v, tag)
	case reflect.Slice:
		d.sequence(path, n, v, tag)
	case reflect.String:
		d.str(path, n, v, tag)
	case reflect.Bool:
		if !d.scalar(path, n, "true or false") {
			return
		}
		switch n.Value {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			d.add(n, path, "expected true or false, got %q", n.Value)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		lo, hi := intRange(tag.Get("range"))
		want := "a whole number" + rangeText(tag.Get("range"))
		if !d.scalar(path, n, want) {
			return
		}
		x, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil || x < lo || x > hi || v.OverflowInt(x) {
			d.add(n, path, "expected %s, got %q", want, n.Value)
			return
		}
		v.SetInt(x)
	case reflect.Float64:
		lo, hi := floatRange(tag.Get("range"))
		want := "a number" + rangeText(tag.Get("range"))
		if !d.scalar(path, n, want) {
			return
		}
		x, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || !(x >= lo && x <= hi) {
			d.add(n, path, "expected %s, got %q", want, n.Value)
			return
		}
		v.SetFloat(x)
	default:
		panic(fmt.Sprintf("conf: %s: unsupported field type %s", path, t))
	}
}

func (d *decoder) scalar(path string, n *yaml.Node, want string) bool {
	if n.Kind != yaml.ScalarNode {
		d.add(n, path, "expected %s", want)
		return false
	}
	return true
}

func (d *decoder) str(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	opts := tag.Get("conf")
	oneof := tag.Get("oneof")
	want := "a string"
	if oneof != "" {
		want = strings.ReplaceAll(oneof, "|", " or ")
	}
	if !d.scalar(path, n, want) {
		return
	}
	s := n.Value
	if oneof != "" && !contains(strings.Split(oneof, "|"), s) {
		d.add(n, path, "expected %s, got %q", want, s)
		return
	}
	if hasOpt(opts, "env") {
		x, err := ExpandEnv(s)
		if err != nil {
			d.add(n, path, "%v", err)
			return
		}
		s = x
	}
	if hasOpt(opts, "url") {
		if err := CheckURL(s); err != nil {
			d.add(n, path, "expected an http(s) URL, got %q", n.Value)
			return
		}
	}
	v.SetString(s)
}

func (d *decoder) duration(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	r := tag.Get("range")
	want := "a duration" + rangeText(r) + " such as 30s"
	if !d.scalar(path, n, want) {
		return
	}
	parse := time.ParseDuration
	if hasOpt(tag.Get("conf"), "days") {
		parse = parseDur
	}
	x, err := parse(n.Value)
	lo, hi := durRange(r)
	if err != nil || x < lo || x > hi {
		d.add(n, path, "expected %s, got %q", want, n.Value)
		return
	}
	v.SetInt(int64(x))
}

func (d *decoder) bytes(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	r := tag.Get("range")
	want := "a size" + rangeText(r) + " such as 8MiB or 1048576"
	if !d.scalar(path, n, want) {
		return
	}
	x, err := ParseBytes(n.Value)
	lo, hi := bytesRange(r)
	if err != nil || x < lo || x > hi {
		d.add(n, path, "expected %s, got %q", want, n.Value)
		return
	}
	v.SetInt(x)
}

// fields are a struct type's keys in declaration order (embedded structs'
// keys inline).
type field struct {
	key   string
	index []int
	tag   reflect.StructTag
}

func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for _, sub := range fields(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				out = append(out, sub)
			}
			continue
		}
		if name == "" {
			continue // not a key: computed or set after decoding
		}
		out = append(out, field{key: name, index: f.Index, tag: f.Tag})
	}
	return out
}

// Keys lists the keys of a section's struct, for messages ("want ...").
func Keys(section any) string {
	t := reflect.TypeOf(section)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var ks []string
	for _, f := range fields(t) {
		ks = append(ks, f.key)
	}
	return strings.Join(ks, ", ")
}

func (d *decoder) structure(path string, n *yaml.Node, v reflect.Value) {
	fs := fields(v.Type())
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "expected a mapping with %s", strings.Join(keys, ", "))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		j := indexOf(keys, k.Value)
		if j < 0 {
			d.add(k, path, "unknown key %q (want %s)", k.Value, strings.Join(keys, ", "))
			continue
		}
		if seen[k.Value] {
			d.add(k, path, "key %q appears twice", k.Value)
			continue
		}
		seen[k.Value] = true
		sub := join(path, k.Value)
		d.nodes[sub] = val
		d.value(sub, val, v.FieldByIndex(fs[j].index), fs[j].tag)
	}
	for _, f := range fs {
		if !seen[f.key] && hasOpt(f.tag.Get("conf"), "required") {
			d.add(n, path, "missing %s", f.key)
		}
	}
	if v.CanAddr() && v.Addr().Type().Implements(validatorType) {
		if err := v.Addr().Interface().(Validator).Validate(); err != nil {
			d.located(path, n, err)
		}
	}
}

// located adds err, whose FieldErrors name fields below path, at the
// lines of those fields (or of the section when a field is absent).
func (d *decoder) located(path string, n *yaml.Node, err error) {
	for _, e := range joined(err) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			d.add(n, path, "%v", e)
			continue
		}
		at, p := n, path
		if fe.Field != "" {
			p = join(path, fe.Field)
			if m, ok := d.nodes[p]; ok {
				at = m
			} else if m := find(n, fe.Field); m != nil {
				at = m
			}
		}
		d.add(at, p, "%s", fe.Msg)
	}
}

// joined lists the errors err joins (errors.Join, nested as a Validate
// that joins its parts' returns), or err itself.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, joined(e)...)
	}
	return out
}

// find returns the node at a dotted path below n, if present.
func find(n *yaml.Node, dotted string) *yaml.Node {
	for _, k := range strings.Split(dotted, ".") {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func (d *decoder) mapping(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	if v.Type().Key().Kind() != reflect.String {
		panic(fmt.Sprintf("conf: %s: map keys must be strings", path))
	}
	if n.Kind != yaml.MappingNode {
		d.add(n, path, "expected a mapping")
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	elemTag := reflect.StructTag(elemTags(tag))
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.add(k, path, "expected a name as the key")
			continue
		}
		if v.MapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key())).IsValid() {
			d.add(k, path, "key %q appears twice", k.Value)
			continue
		}
		sub := join(path, k.Value)
		d.nodes[sub] = val
		e := reflect.New(v.Type().Elem()).Elem()
		before := len(d.errs)
		d.value(sub, val, e, elemTag)
		if len(d.errs) == before {
			v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
		}
	}
}

func (d *decoder) sequence(path string, n *yaml.Node, v reflect.Value, tag reflect.StructTag) {
	items := n.Content
	if n.Kind != yaml.SequenceNode {
		if !(hasOpt(tag.Get("conf"), "one") && n.Kind == yaml.ScalarNode) {
			d.add(n, path, "expected a list")
			return
		}
		items = []*yaml.Node{n}
	}
	out := reflect.MakeSlice(v.Type(), 0, len(items))
	elemTag := reflect.StructTag(elemTags(tag))
	for i, it := range items {
		e := reflect.New(v.Type().Elem()).Elem()
		sub := fmt.Sprintf("%s[%d]", path, i)
		d.nodes[sub] = it
		d.value(sub, it, e, elemTag)
		out = reflect.Append(out, e)
	}
	v.Set(out)
}

// elemTags passes a collection's value tags to its elements (a list of
// env-expanded strings, a map of bounded numbers).
func elemTags(tag reflect.StructTag) string {
	var parts []string
	for _, k := range []string{"conf", "oneof", "range"} {
		if x, ok := tag.Lookup(k); ok {
			parts = append(parts, fmt.Sprintf("%s:%q", k, x))
		}
	}
	return strings.Join(parts, " ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func hasOpt(opts, o string) bool { return contains(strings.Split(opts, ","), o) }

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// rangeText is " in LO..HI", " of at least LO" or " of at most HI" for a
// range tag, "" for none.
func rangeText(r string) string {
	lo, hi, ok := strings.Cut(r, "..")
	switch {
	case !ok:
		return ""
	case lo != "" && hi != "":
		return " in " + r
	case lo != "":
		return " of at least " + lo
	default:
		return " of at most " + hi
	}
}

// bounds reads a range tag "LO..HI" (either end may be left open: min,
// max) with parse; a bound that does not parse is a programming error.
func bounds[T any](r string, min, max T, parse func(string) (T, error)) (T, T) {
	lo, hi := min, max
	a, b, _ := strings.Cut(r, "..")
	for _, e := range []struct {
		text string
		dst  *T
	}{{a, &lo}, {b, &hi}} {
		if e.text == "" {
			continue
		}
		x, err := parse(e.text)
		if err != nil {
			panic("conf: bad range bound " + e.text)
		}
		*e.dst = x
	}
	return lo, hi
}

func intRange(r string) (int64, int64) {
	return bounds(r, math.MinInt64, math.MaxInt64, func(s string) (int64, error) {
		return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	})
}

func floatRange(r string) (float64, float64) {
	return bounds(r, math.Inf(-1), math.Inf(1), func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
}

func durRange(r string) (time.Duration, time.Duration) {
	return bounds(r, time.Duration(math.MinInt64), time.Duration(math.MaxInt64), parseDur)
}

func bytesRange(r string) (int64, int64) {
	return bounds(r, math.MinInt64, math.MaxInt64, ParseBytes)
}

// parseDur is time.ParseDuration with a whole number of days (30d): range
// tags, and values of fields with `conf:"days"`.
func parseDur(s string) (time.Duration, error) {
	if x, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/int64(24*time.Hour) {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// DecodeYAML decodes src, a YAML document holding one section's value,
// as Decode does (a section given on its own: a test's, a tool's).
func DecodeYAML(file, path string, src []byte, dst any) ErrorList {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return YAMLErrors(file, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return Decode(file, path, doc.Content[0], dst)
}
