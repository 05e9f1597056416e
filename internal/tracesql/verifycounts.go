package tracesql

// KeyedCounts is what a store's verify reports of the chain key and the
// approvals, beside its own fields (both stores' VerifyReport embed it, so
// the JSON is flat).
type KeyedCounts struct {
	// BeforeKey and Keyed split the verified rows: rows from before the
	// chain key (their unkeyed SHA-256 recomputed: an editor who
	// recomputes the hashes passes), and rows chained under the key.
	BeforeKey int64 `json:"before_key"`
	Keyed     int64 `json:"keyed"`
	// ChainKey is the id of the key the trace's marker names ("" when it
	// names none); KeyChecked, whether verify had that key and checked
	// every keyed row's MAC (else only their linkage: that each names the
	// hash stored before it).
	ChainKey   string `json:"chain_key"`
	KeyChecked bool   `json:"key_checked"`
	// Approvals and ApprovalsUnchecked count the approvals checked against
	// the trace's records, and those whose ask record is not in it
	// (retention deleted it): not checked.
	Approvals          int64 `json:"approvals"`
	ApprovalsUnchecked int64 `json:"approvals_unchecked"`
}
