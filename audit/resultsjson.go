package audit

import (
	"strconv"

	"github.com/wardenhq/warden"

	"github.com/wardenhq/warden/internal/jsonappend"
)

// AppendResults appends rs as encoding/json's Marshal writes it (a nil rs is
// null): the results of a trace record as the stores keep them. A Patch is
// compacted and escaped by encoding/json, which also rejects one that is not
// valid JSON.
func AppendResults(dst []byte, rs []warden.Result) ([]byte, error) {
	if rs == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range rs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendResult(dst, &rs[i]); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// appendResult writes r's members in Result's field order, leaving out the
// omitempty ones that are empty.
func appendResult(dst []byte, r *warden.Result) ([]byte, error) {
	dst = jsonappend.String(append(dst, `{"guardian":`...), r.Guardian)
	if r.PolicyID != "" {
		dst = jsonappend.String(append(dst, `,"policy_id":`...), r.PolicyID)
	}
	if r.PolicyVersion != "" {
		dst = jsonappend.String(append(dst, `,"policy_version":`...), r.PolicyVersion)
	}
	dst = jsonappend.String(append(dst, `,"decision":`...), r.Decision)
	dst = jsonappend.String(append(dst, `,"mode":`...), r.Mode)
	if r.Reason != "" {
		dst = jsonappend.String(append(dst, `,"reason":`...), r.Reason)
	}
	dst = strconv.AppendInt(append(dst, `,"latency_us":`...), r.LatencyUS, 10)
	dst = jsonappend.String(append(dst, `,"error":`...), r.Error)
	if r.Kind != "" {
		dst = jsonappend.String(append(dst, `,"kind":`...), r.Kind)
	}
	if len(r.Patch) > 0 {
		var err error
		if dst, err = jsonappend.Marshaled(append(dst, `,"patch":`...), r.Patch); err != nil {
			return dst, err
		}
	}
	if r.Refused != "" {
		dst = jsonappend.String(append(dst, `,"refused":`...), r.Refused)
	}
	if r.PolicyRevision != "" {
		dst = jsonappend.String(append(dst, `,"policy_revision":`...), r.PolicyRevision)
	}
	if len(r.Labels) > 0 {
		dst = jsonappend.Strings(append(dst, `,"labels":`...), r.Labels)
	}
	return append(dst, '}'), nil
}
