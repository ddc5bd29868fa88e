package pgvalue

// Interval is a PostgreSQL interval with months and days kept apart.
type Interval struct {
	Months       int32
	Days         int32
	Microseconds int64
}
