package audit

// DefaultLast is the number of records one read of the runs API gives
// without ?last=; MaxLast caps ?last= and `warden runs --last`.
const (
	DefaultLast = 100
	MaxLast     = 10000
)
