package executor

import (
	"time"

	"topicgate/executor/internal/settings"
	"topicgate/sql/values"
	"topicgate/wire"
)

// presentRow turns a row's values into the forms the wire layer prints
// for its columns: intervals as days and time (durationInterval), and
// timestamptz values in the session's zone, so they print with its offset
// as PostgreSQL prints timestamptz in the TimeZone setting (binary values
// are instants and do not change). Under a DateStyle whose output is not
// ISO, dates and timestamps are wrapped with it (values.StyledTime); ISO
// values are left for the wire layer's own fast path.
func presentRow(r []any, cols []wire.Column, set *settings.Settings) {
	loc, ds := set.Location(), set.DateStyle()
	for i, c := range cols {
		if i >= len(r) {
			return
		}
		switch v := r[i].(type) {
		case time.Duration:
			if c.TypeOID == wire.OIDInterval {
				r[i] = durationInterval(v)
			}
		case time.Time:
			switch c.TypeOID {
			case wire.OIDTimestamptz:
				v = v.In(loc)
				r[i] = v
			case wire.OIDDate, wire.OIDTimestamp:
			default:
				continue
			}
			if ds.Output != values.DateISO {
				r[i] = values.StyledTime{T: v, Style: ds}
			}
		}
	}
}

// durationInterval splits d into days and time, as PostgreSQL prints
// intervals ("1 day 02:00:00").
func durationInterval(d time.Duration) wire.Interval {
	day := 24 * time.Hour
	return wire.Interval{Days: int32(d / day), Microseconds: int64(d%day) / 1000}
}
