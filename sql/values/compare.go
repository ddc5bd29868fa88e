package values

import (
	"bytes"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"topicgate/sql/pgerror"
)

// Compare orders two non-NULL values of comparable types.
func Compare(a, b any) (int, error) {
	if x, ok := a.(*apd.Decimal); ok {
		return compareNumeric(x, b)
	}
	if y, ok := b.(*apd.Decimal); ok {
		c, err := compareNumeric(y, a)
		return -c, err
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp3(x < y, x > y), nil
		case float64:
			return cmp3(float64(x) < y, float64(x) > y), nil
		case string:
			f, err := ParseText(y, TFloat8)
			if err != nil {
				return 0, err
			}
			return Compare(float64(x), f)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmp3(x < y, x > y), nil
		case int64:
			return cmp3(x < float64(y), x > float64(y)), nil
		case string:
			f, err := ParseText(y, TFloat8)
			if err != nil {
				return 0, err
			}
			return Compare(x, f)
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y), nil
		case int64, float64:
			c, err := Compare(b, a)
			return -c, err
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmp3(x < y, x > y), nil
		}
	}
	return 0, pgerror.Newf(pgerror.CodeDatatypeMismatch, "cannot compare %T with %T", a, b)
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}
