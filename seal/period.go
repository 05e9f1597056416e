package seal

import (
	"fmt"
	"time"
)

// Granularity is how long a period DEK seals: the values of one tenant in
// one period share a DEK, so retention destroys them a period at a time.
// The zero value is Month.
type Granularity int

const (
	// Month: a period is a UTC calendar month, named "2006-01".
	Month Granularity = iota
	// Day: a period is a UTC day, named "2006-01-02".
	Day
	// Year: a period is a UTC year, named "2006".
	Year
)

// layout is the period name's time layout.
func (g Granularity) layout() string {
	switch g {
	case Day:
		return "2006-01-02"
	case Year:
		return "2006"
	default:
		return "2006-01"
	}
}

// String names the granularity ("month", "day", "year").
func (g Granularity) String() string {
	switch g {
	case Day:
		return "day"
	case Year:
		return "year"
	default:
		return "month"
	}
}

// Period names the period holding t (in UTC).
func (g Granularity) Period(t time.Time) string { return t.UTC().Format(g.layout()) }

// PeriodEnd returns the first instant after the period named period, of
// any granularity (the name says which): a period whose end is before a
// retention cutoff holds only values older than it.
func PeriodEnd(period string) (time.Time, error) {
	for _, g := range []Granularity{Month, Day, Year} {
		if len(period) != len(g.layout()) {
			continue
		}
		t, err := time.Parse(g.layout(), period)
		if err != nil || g.Period(t) != period {
			break
		}
		switch g {
		case Day:
			return t.AddDate(0, 0, 1), nil
		case Year:
			return t.AddDate(1, 0, 0), nil
		default:
			return t.AddDate(0, 1, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("seal: %q is not a period name (2006, 2006-01 or 2006-01-02)", period)
}
