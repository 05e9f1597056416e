package seal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/seal/sealtest"
)

var (
	ctx = context.Background()
	t0  = time.Date(2025, 6, 18, 10, 0, 0, 0, time.UTC)
)

func kek(t testing.TB, b byte) seal.KEK {
	t.Helper()
	k, err := seal.NewKEK(bytes.Repeat([]byte{b}, seal.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newSealer(t testing.TB, k seal.KEK, st seal.KeyStore) *seal.Sealer {
	t.Helper()
	s, err := seal.New(seal.Options{KEK: k, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustSeal(t testing.TB, s *seal.Sealer, tenant, session string, at time.Time, p, aad string) []byte {
	t.Helper()
	b, err := s.Seal(ctx, tenant, session, at, []byte(p), []byte(aad))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hdr is the length of the sealed value b's header.
func hdr(t *testing.T, b []byte) int {
	_, n, err := seal.ParseEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSealOpen: a sealed value opens for its tenant and additional data
// only; altered, moved or erased, it does not, with an error saying why.
func TestSealOpen(t *testing.T) {
	const aad = "rec-1/input.to"
	cases := []struct {
		name   string
		change func(t *testing.T, s *seal.Sealer, sealed []byte) (tenant string, b []byte, ad string)
		want   error
	}{
		{"as sealed", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) { return "acme", b, aad }, nil},
		{"ciphertext altered", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			b[len(b)-1] ^= 1
			return "acme", b, aad
		}, seal.ErrTampered},
		{"nonce altered", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			b[hdr(t, b)] ^= 0x80
			return "acme", b, aad
		}, seal.ErrTampered},
		{"key id altered", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			b[hdr(t, b)-1] ^= 1
			return "acme", b, aad
		}, seal.ErrUnknownKey},
		{"moved to another session", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			mustSeal(t, s, "acme", "s-2", t0, "x", aad) // s-2 has a key, not this one
			return "acme", bytes.Replace(b, []byte("s-1"), []byte("s-2"), 1), aad
		}, seal.ErrUnknownKey},
		{"wrong tenant", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) { return "globex", b, aad }, seal.ErrWrongTenant},
		{"relabelled to another tenant", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			mustSeal(t, s, "acmf", "s-1", t0, "x", aad)
			return "acmf", bytes.Replace(b, []byte("acme"), []byte("acmf"), 1), aad
		}, seal.ErrUnknownKey},
		{"another record", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			return "acme", b, "rec-2/input.to"
		}, seal.ErrTampered},
		{"no additional data", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) { return "acme", b, "" }, seal.ErrTampered},
		{"session forgotten", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			if n, err := s.ForgetSession(ctx, "acme", "s-1"); err != nil || n != 1 {
				t.Fatalf("ForgetSession: %d %v", n, err)
			}
			return "acme", b, aad
		}, seal.ErrErased},
		{"period destroyed", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			if n, err := s.DestroyPeriod(ctx, "acme", "2025-06"); err != nil || n != 2 {
				t.Fatalf("DestroyPeriod: %d %v", n, err)
			}
			return "acme", b, aad
		}, seal.ErrErased},
		{"another period destroyed", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			mustSeal(t, s, "acme", "s-1", t0.AddDate(0, -1, 0), "x", aad)
			if _, err := s.DestroyPeriod(ctx, "acme", "2025-05"); err != nil {
				t.Fatal(err)
			}
			return "acme", b, aad
		}, nil},
		{"another session forgotten", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			mustSeal(t, s, "acme", "s-2", t0, "x", aad)
			if _, err := s.ForgetSession(ctx, "acme", "s-2"); err != nil {
				t.Fatal(err)
			}
			return "acme", b, aad
		}, nil},
		{"the same session of another tenant forgotten", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			mustSeal(t, s, "globex", "s-1", t0, "x", aad)
			if _, err := s.ForgetSession(ctx, "globex", "s-1"); err != nil {
				t.Fatal(err)
			}
			return "acme", b, aad
		}, nil},
		{"newer version", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			b[0] = 2
			return "acme", b, aad
		}, seal.ErrMalformed},
		{"truncated", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) {
			return "acme", b[:hdr(t, b)+12+15], aad
		}, seal.ErrMalformed},
		{"empty", func(t *testing.T, s *seal.Sealer, b []byte) (string, []byte, string) { return "acme", nil, aad }, seal.ErrMalformed},
	}
	const secret = "alice@example.com, card 4111-1111"
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &sealtest.Mem{}
			k := kek(t, 1)
			s := newSealer(t, k, st)
			sealed := mustSeal(t, s, "acme", "s-1", t0, secret, aad)
			if bytes.Contains(sealed, []byte("alice")) {
				t.Fatal("the sealed value holds the plaintext")
			}
			tenant, b, ad := c.change(t, s, sealed)
			// The Sealer that sealed (its cache warm) and a new one
			// (reading the store) agree.
			for i, o := range []*seal.Sealer{s, newSealer(t, k, st)} {
				p, err := o.Open(ctx, tenant, b, []byte(ad))
				if c.want == nil {
					if err != nil || string(p) != secret {
						t.Fatalf("sealer %d: Open = %q, %v", i, p, err)
					}
					continue
				}
				if !errors.Is(err, c.want) || p != nil {
					t.Fatalf("sealer %d: Open = %q, %v; want %v", i, p, err, c.want)
				}
			}
		})
	}
}

// TestForgetThenContinue: a session forgotten and then continued gets a
// new key; what was sealed before stays erased.
func TestForgetThenContinue(t *testing.T) {
	st := &sealtest.Mem{}
	s := newSealer(t, kek(t, 1), st)
	old := mustSeal(t, s, "acme", "s-1", t0, "before", "a")
	if _, err := s.ForgetSession(ctx, "acme", "s-1"); err != nil {
		t.Fatal(err)
	}
	now := mustSeal(t, s, "acme", "s-1", t0, "after", "a")
	if _, err := s.Open(ctx, "acme", old, []byte("a")); !errors.Is(err, seal.ErrErased) {
		t.Fatalf("old value: %v", err)
	}
	if p, err := s.Open(ctx, "acme", now, []byte("a")); err != nil || string(p) != "after" {
		t.Fatalf("new value: %q %v", p, err)
	}
	for _, k := range st.Keys() {
		if k.Destroyed != (k.Wrapped == nil) {
			t.Fatalf("key %v: destroyed %v with %d wrapped bytes", k.KeyRef, k.Destroyed, len(k.Wrapped))
		}
	}
}

// A key another process destroys opens nothing in this one from that
// moment, though this one had it cached (a fleet's replicas, the forget
// command beside a server).
func TestOpenSeesDestroyElsewhere(t *testing.T) {
	st := &sealtest.Mem{}
	server, cli := newSealer(t, kek(t, 1), st), newSealer(t, kek(t, 1), st)
	v := mustSeal(t, server, "acme", "s-1", t0, "bob@external.example", "a")
	if p, err := server.Open(ctx, "acme", v, []byte("a")); err != nil || string(p) != "bob@external.example" {
		t.Fatalf("open: %q %v", p, err)
	}
	if _, err := cli.ForgetSession(ctx, "acme", "s-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Open(ctx, "acme", v, []byte("a")); !errors.Is(err, seal.ErrErased) {
		t.Fatalf("open after another process forgot the session: %v", err)
	}
}

// TestHierarchy: one DEK per tenant and period, one session key per
// session and period, each wrapped (none holds a key in the clear).
func TestHierarchy(t *testing.T) {
	st := &sealtest.Mem{}
	s := newSealer(t, kek(t, 1), st)
	for _, v := range []struct {
		tenant, session string
		at              time.Time
	}{
		{"acme", "s-1", t0}, {"acme", "s-1", t0.Add(time.Hour)}, {"acme", "s-2", t0},
		{"acme", "s-1", t0.AddDate(0, 1, 0)}, {"globex", "s-1", t0},
	} {
		mustSeal(t, s, v.tenant, v.session, v.at, "v", "")
	}
	count := map[seal.Kind]int{}
	for _, k := range st.Keys() {
		count[k.Kind]++
		if len(k.Wrapped) != 12+seal.KeySize+16 {
			t.Fatalf("%v: %d wrapped bytes", k.KeyRef, len(k.Wrapped))
		}
	}
	if count[seal.KindDEK] != 3 || count[seal.KindSession] != 4 {
		t.Fatalf("keys: %v, want 3 DEKs (acme 06, acme 07, globex 06) and 4 session keys", count)
	}
}

// TestConcurrentFirstSeal: sealers racing to seal a session's first value
// agree on one key.
func TestConcurrentFirstSeal(t *testing.T) {
	st := &sealtest.Mem{}
	k := kek(t, 1)
	var wg sync.WaitGroup
	out := make([][]byte, 8)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = mustSeal(t, newSealer(t, k, st), "acme", "s-1", t0, "v", "")
		}()
	}
	wg.Wait()
	o := newSealer(t, k, st)
	for i, b := range out {
		if _, err := o.Open(ctx, "acme", b, nil); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
	}
	if n := len(st.Keys()); n != 2 {
		t.Fatalf("%d keys, want one DEK and one session key", n)
	}
}

// TestRotate: after rotation only the new KEK is needed; records and
// session keys are untouched; a second run has nothing to do.
func TestRotate(t *testing.T) {
	st := &sealtest.Mem{}
	oldK, newK := kek(t, 1), kek(t, 2)
	s := newSealer(t, oldK, st)
	var sealed [][]byte
	for _, at := range []time.Time{t0, t0.AddDate(0, -1, 0)} {
		for _, tenant := range []string{"acme", "globex"} {
			sealed = append(sealed, mustSeal(t, s, tenant, "s-1", at, tenant+" secret", "r"))
		}
	}
	before := st.Keys()
	copies := make([][]byte, len(sealed))
	for i, b := range sealed {
		copies[i] = bytes.Clone(b)
	}
	n, err := seal.Rotate(ctx, st, oldK, newK)
	if err != nil || n != 4 {
		t.Fatalf("Rotate = %d, %v; want 4 DEKs", n, err)
	}
	for i, k := range st.Keys() {
		switch k.Kind {
		case seal.KindDEK:
			if k.KEK != newK.ID() || bytes.Equal(k.Wrapped, before[i].Wrapped) {
				t.Fatalf("DEK %v not rewrapped", k.KeyRef)
			}
		case seal.KindSession:
			if !bytes.Equal(k.Wrapped, before[i].Wrapped) {
				t.Fatalf("session key %v changed", k.KeyRef)
			}
		}
	}
	fresh := newSealer(t, newK, st)
	for i, b := range sealed {
		if !bytes.Equal(b, copies[i]) {
			t.Fatal("a record changed")
		}
		tenant := []string{"acme", "globex"}[i%2]
		if p, err := fresh.Open(ctx, tenant, b, []byte("r")); err != nil || string(p) != tenant+" secret" {
			t.Fatalf("value %d after rotation: %q %v", i, p, err)
		}
	}
	if _, err := newSealer(t, oldK, st).Open(ctx, "acme", sealed[0], []byte("r")); !errors.Is(err, seal.ErrWrongKEK) {
		t.Fatalf("old KEK after rotation: %v, want ErrWrongKEK", err)
	}
	if n, err := seal.Rotate(ctx, st, oldK, newK); err != nil || n != 0 {
		t.Fatalf("second Rotate = %d, %v", n, err)
	}
	if _, err := seal.Rotate(ctx, st, kek(t, 3), kek(t, 4)); !errors.Is(err, seal.ErrWrongKEK) {
		t.Fatalf("Rotate from a KEK that wraps nothing: %v", err)
	}
}

// TestExpirePeriods: retention destroys the periods that ended by the
// cutoff, of every tenant, and no other.
func TestExpirePeriods(t *testing.T) {
	st := &sealtest.Mem{}
	s := newSealer(t, kek(t, 1), st)
	may := mustSeal(t, s, "acme", "s", t0.AddDate(0, -1, 0), "may", "")
	mayG := mustSeal(t, s, "globex", "s", t0.AddDate(0, -1, 0), "may", "")
	june := mustSeal(t, s, "acme", "s", t0, "june", "")
	done, err := s.ExpirePeriods(ctx, time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC))
	if err != nil || len(done) != 2 {
		t.Fatalf("ExpirePeriods = %v, %v", done, err)
	}
	for _, c := range []struct {
		tenant string
		b      []byte
		want   error
	}{{"acme", may, seal.ErrErased}, {"globex", mayG, seal.ErrErased}, {"acme", june, nil}} {
		if _, err := s.Open(ctx, c.tenant, c.b, nil); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.tenant, err, c.want)
		}
	}
}

func TestPeriods(t *testing.T) {
	for _, c := range []struct {
		g         seal.Granularity
		at        time.Time
		name, end string
	}{
		{seal.Month, t0, "2025-06", "2025-07-01"},
		{seal.Month, time.Date(2025, 12, 31, 23, 30, 0, 0, time.FixedZone("x", -3600)), "2026-01", "2026-02-01"},
		{seal.Day, t0, "2025-06-18", "2025-06-19"},
		{seal.Year, t0, "2025", "2026-01-01"},
	} {
		p := c.g.Period(c.at)
		end, err := seal.PeriodEnd(p)
		if p != c.name || err != nil || end.Format("2006-01-02") != c.end {
			t.Errorf("%v %v: %q ends %v (%v); want %q ending %s", c.g, c.at, p, end, err, c.name, c.end)
		}
	}
	for _, bad := range []string{"", "2025-6", "2025-13", "25-06-01", "2025-06-31", "20x5"} {
		if _, err := seal.PeriodEnd(bad); err == nil {
			t.Errorf("PeriodEnd(%q) accepted", bad)
		}
	}
	st := &sealtest.Mem{}
	s, err := seal.New(seal.Options{KEK: kek(t, 1), Store: st, Granularity: seal.Day})
	if err != nil {
		t.Fatal(err)
	}
	mustSeal(t, s, "acme", "s", t0, "v", "")
	if k := st.Keys()[0]; k.Period != "2025-06-18" {
		t.Fatalf("day granularity: period %q", k.Period)
	}
}

// TestFileKEK: a KEK file is 32 raw bytes or a text form, mode 0600; one
// group or others may read is refused with the fix.
func TestFileKEK(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, seal.KeySize)
	want := kek(t, 0xab).ID()
	cases := []struct {
		name    string
		content []byte
		mode    os.FileMode
		err     string // "" when accepted
	}{
		{"raw", raw, 0o600, ""},
		{"hex", []byte("hex:" + hex.EncodeToString(raw) + "\n"), 0o600, ""},
		{"base64", []byte("base64:" + base64.StdEncoding.EncodeToString(raw) + "\n"), 0o400, ""},
		{"base64 unpadded", []byte("base64:" + base64.RawStdEncoding.EncodeToString(raw)), 0o600, ""},
		{"mode 0644", raw, 0o644, "is accessible by group or others (mode 0644); run: chmod 600 "},
		{"mode 0640", raw, 0o640, "(mode 0640)"},
		{"mode 0604", raw, 0o604, "(mode 0604)"},
		{"short", raw[:31], 0o600, "not a 32-byte key"},
		{"long hex", []byte("hex:" + hex.EncodeToString(append(raw, 1))), 0o600, "not a 32-byte key"},
		{"bad hex", []byte("hex:zz"), 0o600, "not valid hexadecimal"},
		{"zero", make([]byte, seal.KeySize), 0o600, "all zero"},
		{"huge", bytes.Repeat([]byte("a"), 5000), 0o600, "larger than"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(path, c.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			k, err := seal.FileKEK(path)
			if c.err == "" {
				if err != nil || k.ID() != want {
					t.Fatalf("FileKEK: %v %v", k, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), path) {
				t.Fatalf("FileKEK: %v; want an error naming %s with %q", err, path, c.err)
			}
			if strings.Contains(err.Error(), "abab") {
				t.Fatalf("the error holds the key: %v", err)
			}
		})
	}
	if _, err := seal.FileKEK(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := seal.FileKEK(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

func TestEnvKEK(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, seal.KeySize)
	t.Setenv("SEAL_TEST_KEK", "hex:"+hex.EncodeToString(raw))
	k, err := seal.EnvKEK("SEAL_TEST_KEK")
	if err != nil || k.ID() != kek(t, 0xab).ID() {
		t.Fatalf("EnvKEK: %v %v", k, err)
	}
	t.Setenv("SEAL_TEST_KEK", "short")
	if _, err := seal.EnvKEK("SEAL_TEST_KEK"); err == nil || !strings.Contains(err.Error(), "SEAL_TEST_KEK") {
		t.Fatalf("a short key: %v", err)
	}
	if _, err := seal.EnvKEK("SEAL_TEST_KEK_UNSET"); err == nil || !strings.Contains(err.Error(), "is not set") {
		t.Fatalf("unset: %v", err)
	}
}

// TestKEKWrap: a wrapped DEK unwraps only with its additional data.
func TestKEKWrap(t *testing.T) {
	k := kek(t, 1)
	w, err := k.Wrap([]byte("dek"), []byte("ad"))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := k.Unwrap(w, []byte("ad")); err != nil || string(p) != "dek" {
		t.Fatalf("Unwrap: %q %v", p, err)
	}
	for _, c := range []struct{ w, ad []byte }{{w, []byte("other")}, {w[:10], []byte("ad")}, {append(bytes.Clone(w[:len(w)-1]), w[len(w)-1]^1), []byte("ad")}} {
		if _, err := k.Unwrap(c.w, c.ad); err == nil {
			t.Fatal("unwrapped")
		}
	}
	if _, err := kek(t, 2).Unwrap(w, []byte("ad")); err == nil {
		t.Fatal("unwrapped with another KEK")
	}
}

func FuzzParseEnvelope(f *testing.F) {
	s := newSealer(f, kek(f, 1), &sealtest.Mem{})
	f.Add(mustSeal(f, s, "acme", "s-1", t0, "secret", "a"))
	f.Add(mustSeal(f, s, "t", "", t0, "", ""))
	f.Add([]byte{1, 1, 'a', 4, '2', '0', '2', '5', 0})
	f.Add([]byte{1, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, hdr, err := seal.ParseEnvelope(b)
		if err != nil {
			if !errors.Is(err, seal.ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
		} else {
			if m := e.Marshal(); !bytes.Equal(m, b) {
				t.Fatalf("Marshal(Parse(%x)) = %x", b, m)
			}
			if hdr <= 0 || hdr+12+16 > len(b) {
				t.Fatalf("header length %d of %d", hdr, len(b))
			}
		}
		// Open never panics and never opens what it did not seal.
		if p, err := s.Open(ctx, e.Tenant, b, []byte("a")); err == nil && string(p) != "secret" {
			t.Fatalf("opened %q", p)
		}
	})
}

func benchSealer(b *testing.B) (*seal.Sealer, []byte, []byte) {
	s := newSealer(b, kek(b, 1), &sealtest.Mem{})
	v, aad := bytes.Repeat([]byte("x"), 32), []byte("rec-1/input.to")
	return s, v, aad
}

func BenchmarkSeal(b *testing.B) {
	s, v, aad := benchSealer(b)
	mustSeal(b, s, "acme", "s-1", t0, "warm", string(aad))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Seal(ctx, "acme", "s-1", t0, v, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s, v, aad := benchSealer(b)
	sealed, err := s.Seal(ctx, "acme", "s-1", t0, v, aad)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Open(ctx, "acme", sealed, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func TestInDir(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/data/seal.kek", "/data", true},
		{"/data/sub/seal.kek", "/data/", true},
		{"/data-keys/seal.kek", "/data", false},
		{"/etc/warden/seal.kek", "/data", false},
		{"/data/../etc/seal.kek", "/data", false},
		{"..foo/seal.kek", ".", true},
	} {
		if got := seal.InDir(c.path, c.dir); got != c.want {
			t.Errorf("InDir(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}
