package jsonstrict

import (
	"errors"
)

// errStop ends a walk of Members early.
var errStop = errors.New("stop")

// Members calls fn with each member of the object that data holds (JSON
// text Check accepted), in order: the key as encoding/json decodes it and
// the value's raw bytes, until fn returns false. It decodes no value, so
// finding a few members of a large object costs one pass over their bytes.
// Text that is not an object gives no calls; text Check did not accept
// gives some calls or none, never a panic. The key may share data's
// memory: copy it to keep it after fn returns.
func Members(data []byte, fn func(key string, value []byte) bool) {
	p := checker(data)
	defer p.release()
	if p.Peek() != '{' {
		return
	}
	p.WalkObject(func(k string) error {
		start := p.i
		if _, err := p.value(); err != nil {
			return err
		}
		if !fn(k, data[start:p.i]) {
			return errStop
		}
		return nil
	})
}
