package redact

import (
	"fmt"

	"github.com/wardenhq/warden/internal/keyfile"
)

// KeyFileName is the file in the data directory that holds the HMAC key of
// the trace's redactions: KeySize random bytes, mode 0600, created once and
// reused, so the same secret gets the same tag in every record of the trace.
// Losing it only means that later tags differ from earlier ones.
const KeyFileName = "trace.key"

// LoadKey returns the key in dir/trace.key, creating it (KeySize bytes from
// crypto/rand, mode 0600) when there is none. A key file that group or
// others may access, or that is not KeySize bytes, is refused with an error
// naming the file and the fix. Two processes creating it at once agree on
// one key (it is written aside and linked into place).
func LoadKey(dir string) ([]byte, error) {
	key, err := keyfile.Load(keyfile.Spec{Dir: dir, Name: KeyFileName, Size: KeySize,
		What: "trace key", Lost: "earlier tags will then not match later ones"})
	if err != nil {
		return nil, fmt.Errorf("redact: %w", err)
	}
	return key, nil
}
