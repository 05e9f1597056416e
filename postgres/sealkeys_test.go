package postgres

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
)

func TestSealKeys(t *testing.T) {
	sealtest.RunKeyStore(t, func(t *testing.T) seal.KeyStore {
		return openTest(t, testSchemaURL(t), Options{}).SealKeys()
	})
}

// TestSealKeysReplicas: the contract holds with each call on one of two
// stores sharing a database, as replicas of a fleet do.
func TestSealKeysReplicas(t *testing.T) {
	sealtest.RunKeyStore(t, func(t *testing.T) seal.KeyStore {
		url := testSchemaURL(t)
		r := &replicas{s: [2]*Store{openTest(t, url, Options{}), openTest(t, url, Options{})}}
		return sealReplicas{r}
	})
}

// sealReplicas is the sealing keys of replicas, each call on the next.
type sealReplicas struct{ r *replicas }

func (k sealReplicas) ks() seal.KeyStore { return k.r.next().SealKeys() }

func (k sealReplicas) Live(ctx context.Context, ref seal.KeyRef) (seal.WrappedKey, error) {
	return k.ks().Live(ctx, ref)
}
func (k sealReplicas) Get(ctx context.Context, ref seal.KeyRef, id seal.KeyID) (seal.WrappedKey, error) {
	return k.ks().Get(ctx, ref, id)
}
func (k sealReplicas) Add(ctx context.Context, w seal.WrappedKey) (seal.WrappedKey, error) {
	return k.ks().Add(ctx, w)
}
func (k sealReplicas) DestroyPeriod(ctx context.Context, tenant, period string) (int, error) {
	return k.ks().DestroyPeriod(ctx, tenant, period)
}
func (k sealReplicas) DestroySession(ctx context.Context, tenant, session string) (int, error) {
	return k.ks().DestroySession(ctx, tenant, session)
}
func (k sealReplicas) DEKs(ctx context.Context) ([]seal.WrappedKey, error) { return k.ks().DEKs(ctx) }
func (k sealReplicas) Rewrap(ctx context.Context, w seal.WrappedKey, kek string, wrapped []byte) error {
	return k.ks().Rewrap(ctx, w, kek, wrapped)
}
