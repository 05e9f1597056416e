package config

import (
	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/notify"
)

// Approvals is the approvals: section (docs/approvals.md): package
// approval's hold time, retry window and console URL, and the channels
// package notify tells about each new approval.
type Approvals struct {
	approval.Config `yaml:",inline"`
	// Notify are the webhooks told about each new approval
	// (approvals.notify); their headers are secrets. Notify.Targets() are
	// what notify.New takes.
	Notify notify.Channels `yaml:"notify"`
}

// DefaultApprovals is the approvals section of a config that has none.
func DefaultApprovals() Approvals {
	return Approvals{Config: approval.DefaultConfig()}
}
