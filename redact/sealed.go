package redact

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/seal"
)

// NoTenant is the tenant a record without one (Record.Tenant "") seals
// under: seal needs a name, and no configured tenant can be called this
// (tenant names start with a letter or digit).
const NoTenant = "-"

// sealedAAD starts the additional data of every sealed original: with the
// record's id and the mark's key after it, a sealed value opens only for
// the record and the mark it was sealed for.
const sealedAAD = "warden/sealed-original v1\x00"

func originalAAD(recordID, key string) []byte {
	return append(append(append([]byte(sealedAAD), recordID...), 0), key...)
}

func sealTenant(t string) string {
	if t == "" {
		return NoTenant
	}
	return t
}

// Plaintext forms: the first byte says what the original was.
const (
	plainText   = 's'
	plainNumber = 'n'
)

// Seal seals each original of o (but those a tag collision made
// ambiguous) under rec's tenant and session at rec's time, bound to rec's
// id and the mark, and sets rec.Sealed to them (see audit.Record.Sealed).
// rec.ID must be set. With nothing to seal, rec.Sealed is left nil.
func Seal(ctx context.Context, s *seal.Sealer, rec *audit.Record, o Originals) error {
	keys := make([]string, 0, len(o))
	for k, v := range o {
		if !v.conflict {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	out := []byte{'{'}
	var plain []byte
	for i, k := range keys {
		v := o[k]
		kind := byte(plainText)
		if v.Number {
			kind = plainNumber
		}
		plain = append(append(plain[:0], kind), v.Text...)
		env, err := s.Seal(ctx, sealTenant(rec.Tenant), rec.SessionID, rec.Time, plain, originalAAD(rec.ID, k))
		if err != nil {
			return fmt.Errorf("sealing a redacted value: %w", err)
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, k)
		out = append(out, ':', '"')
		out = base64.RawURLEncoding.AppendEncode(out, env)
		out = append(out, '"')
	}
	rec.Sealed = append(out, '}')
	return nil
}

// RecordFilter returns the trace's record filter: Filter, and, with a
// Sealer, the sealing of what it replaced into the record (Seal). A record
// with nothing to redact costs the pre-scan alone.
func (r *Redactor) RecordFilter(s *seal.Sealer) audit.RecordFilter {
	if s == nil {
		return func(_ context.Context, rec *audit.Record) error {
			r.Filter(rec)
			return nil
		}
	}
	return func(ctx context.Context, rec *audit.Record) error {
		o := r.FilterOriginals(rec)
		if len(o) == 0 {
			return nil
		}
		// A session's first value reads and writes the key store: bounded
		// as the record's own write is, and not cut short by a caller
		// that went away.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), audit.RecordTimeout)
		defer cancel()
		return Seal(sctx, s, rec, o)
	}
}

// Opened is what Open recovered from a record's sealed originals.
type Opened struct {
	// Originals are the values that opened.
	Originals Originals
	// Erased counts the values whose key was destroyed (forget,
	// retention): they stay redacted.
	Erased int
	// Failed counts the values that did not open for another reason (the
	// wrong KEK, altered bytes); Err is the first such error.
	Failed int
	Err    error
}

// Open opens rec's sealed originals for rec's tenant. A malformed Sealed
// is an error; a value that does not open is counted (Opened.Erased,
// Failed) and stays redacted.
func Open(ctx context.Context, s *seal.Sealer, rec *audit.Record) (Opened, error) {
	var res Opened
	if len(rec.Sealed) == 0 {
		return res, nil
	}
	var m map[string]string
	if err := json.Unmarshal(rec.Sealed, &m); err != nil {
		return res, fmt.Errorf("record %s: sealed originals: %w", rec.ID, err)
	}
	res.Originals = make(Originals, len(m))
	for k, v := range m {
		env, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil {
			return res, fmt.Errorf("record %s: sealed original %q: %w", rec.ID, k, err)
		}
		p, err := s.Open(ctx, sealTenant(rec.Tenant), env, originalAAD(rec.ID, k))
		switch {
		case errors.Is(err, seal.ErrErased):
			res.Erased++
			continue
		case err != nil:
			res.Failed++
			if res.Err == nil {
				res.Err = fmt.Errorf("record %s: sealed original %q: %w", rec.ID, k, err)
			}
			continue
		case len(p) == 0 || p[0] != plainText && p[0] != plainNumber:
			res.Failed++
			if res.Err == nil {
				res.Err = fmt.Errorf("record %s: sealed original %q: unknown form", rec.ID, k)
			}
			continue
		}
		res.Originals[k] = Original{Text: string(p[1:]), Number: p[0] == plainNumber}
	}
	return res, nil
}
