package stream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LeaseBucket is the JetStream key-value bucket holding the publishing
// leases of a fleet (Options.Lease).
const LeaseBucket = "WARDEN_LEASES"

// lease is one publisher's claim to publish a shared store's records: the
// key Options.Name in LeaseBucket, whose value is the holder. The bucket's
// TTL expires a lease its holder stopped renewing; a holder renews it by a
// compare-and-set on its revision every third of the TTL, so two holders
// never both succeed. A publisher that cannot renew within the TTL stops
// storing its cursor; a brief overlap can only republish records, which
// JetStream drops as duplicates by Nats-Msg-Id.
type lease struct {
	kv      jetstream.KeyValue
	key     string
	holder  string
	ttl     time.Duration
	now     func() time.Time
	rev     uint64    // 0: not held
	renewed time.Time // when rev was obtained
}

func newLease(ctx context.Context, js jetstream.JetStream, o Options) (*lease, error) {
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(cctx, jetstream.KeyValueConfig{
		Bucket:  LeaseBucket,
		History: 1,
		TTL:     DefaultLeaseTTL,
		Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", LeaseBucket, err)
	}
	holder := o.Holder
	if holder == "" {
		host, _ := os.Hostname()
		holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	// Keys may hold letters, digits, '-', '_', '/', '=' and '.'.
	key := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, o.Name)
	return &lease{kv: kv, key: key, holder: holder, ttl: DefaultLeaseTTL, now: o.Now}, nil
}

// hold takes or renews the lease and reports whether this publisher holds
// it.
func (l *lease) hold(ctx context.Context) (bool, error) {
	if l.rev != 0 && l.now().Sub(l.renewed) < l.ttl/3 {
		return true, nil
	}
	at := l.now()
	if l.rev != 0 {
		rev, err := l.kv.Update(ctx, l.key, []byte(l.holder), l.rev)
		if err == nil {
			l.rev, l.renewed = rev, at
			return true, nil
		}
		l.rev = 0
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return false, fmt.Errorf("renew the publishing lease: %w", err)
		}
		// Someone else holds it now.
	}
	rev, err := l.kv.Create(ctx, l.key, []byte(l.holder))
	if err == nil {
		l.rev, l.renewed = rev, at
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return false, fmt.Errorf("take the publishing lease: %w", err)
	}
	// Held by another publisher — or by this replica before a restart:
	// the holder's name is not proof (two replicas may share an
	// instance.id by mistake), so even that one waits for the TTL.
	return false, nil
}

// valid reports whether the lease is held and not yet expired.
func (l *lease) valid() bool {
	return l.rev != 0 && l.now().Sub(l.renewed) < l.ttl
}

// release gives the lease up so another publisher takes over at once.
func (l *lease) release(ctx context.Context) {
	if l.rev == 0 {
		return
	}
	_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	l.rev = 0
}
