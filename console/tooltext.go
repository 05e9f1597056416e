package console

import "github.com/wardenhq/warden"

// toolTextFilters is whether the store filters by tool and text
// (warden.Query.Tool and .Text): the form shows those fields only then.
const toolTextFilters = false

// setToolText sets the tool and text filters of q, where the store has them.
func setToolText(q *warden.Query, f filters) {}
