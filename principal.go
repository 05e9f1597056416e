package warden

import "context"

// Principal is who sent a request, as authentication established it: the
// name of the token it presented (later a certificate subject) and the
// tenant that token belongs to. The zero Principal is an unauthenticated
// caller (a server without auth).
type Principal struct {
	// Name is the caller recorded in the trace (Record.Caller).
	Name string
	// Tenant is the caller's tenant (Record.Tenant); "" for none.
	Tenant string
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p; the Decider records it with every
// decision made under ctx.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal ctx carries, or the zero Principal.
func PrincipalFrom(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}
