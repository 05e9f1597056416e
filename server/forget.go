package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/jsonrpc"
	"github.com/wardenhq/warden/jsonstrict"
	"github.com/wardenhq/warden/unseal"
)

// maxForgetBody bounds a POST /api/sessions/{id}/forget body.
const maxForgetBody = 4 << 10

// maxSessionID bounds the session id a forget names.
const maxSessionID = 1024

// forgetAnswer is the answer of POST /api/sessions/{id}/forget.
type forgetAnswer struct {
	Session string `json:"session"`
	Tenant  string `json:"tenant"`
	// KeysDestroyed is how many session keys were destroyed (one per
	// period the session sealed values in; 0 for a session without any,
	// or already forgotten).
	KeysDestroyed int `json:"keys_destroyed"`
}

// forgetHandler serves POST /api/sessions/{id}/forget (scope admin,
// needScope's default for a POST): it erases the sealed originals of the
// session of the caller's tenant by destroying its keys (unseal.Service
// .Forget, which records the erasure), and answers forgetAnswer. The body
// is optional: {"tenant": "..."} names the session's tenant for a caller
// without one ("" or absent: the records without a tenant); a caller held
// to a tenant forgets its own tenant's sessions only (another: 403). 409
// when sealing is off (svc nil).
func forgetHandler(svc *unseal.Service) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		session := r.PathValue("id")
		if len(session) > maxSessionID {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("session: longer than %d bytes", maxSessionID))
			return
		}
		var body struct {
			Tenant *string `json:"tenant"`
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, maxForgetBody+1))
		if err == nil && len(b) > maxForgetBody {
			err = fmt.Errorf("more than %d bytes", maxForgetBody)
		}
		if err == nil && len(b) > 0 {
			err = jsonstrict.Decode(b, &body)
		}
		if err != nil {
			httpError(w, http.StatusBadRequest, `body: expected nothing or {"tenant": "..."}: `+err.Error())
			return
		}
		p := warden.PrincipalFrom(r.Context())
		tenant := p.Tenant
		if body.Tenant != nil {
			if p.Tenant != "" && *body.Tenant != p.Tenant {
				httpError(w, http.StatusForbidden, fmt.Sprintf("forbidden: %s belongs to tenant %s and forgets that tenant's sessions only, not tenant %q's", p.Name, p.Tenant, *body.Tenant))
				return
			}
			tenant = *body.Tenant
		}
		if svc == nil {
			httpError(w, http.StatusConflict, msgSealingOff)
			return
		}
		// The erasure is done and recorded even if the caller hangs up.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), audit.RecordTimeout)
		defer cancel()
		n, err := svc.Forget(ctx, viewerOf(r), tenant, session)
		switch {
		case errors.Is(err, unseal.ErrOtherTenant):
			httpError(w, http.StatusForbidden, "forbidden: "+err.Error())
			return
		case err != nil && n > 0:
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("%d key(s) of session %q destroyed (its originals are erased), but: %v", n, session, err))
			return
		case err != nil:
			httpError(w, http.StatusInternalServerError, fmt.Sprintf("forgetting session %q: %v", session, err))
			return
		}
		jsonrpc.WriteValue(w, http.StatusOK, forgetAnswer{Session: session, Tenant: tenant, KeysDestroyed: n})
	}
}
