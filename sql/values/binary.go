package values

import (
	"encoding/binary"
	"time"

	"topicgate/sql/pgerror"
)

var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ParseBinary converts a field of COPY's binary format (PostgreSQL's
// send/receive representation) to type t: the column types of a topic's
// COPY, bigint (from 2, 4 or 8 bytes), text, bytea, jsonb (version 1),
// timestamptz and interval (a month as 30 days).
func ParseBinary(b []byte, t Type) (any, error) {
	bad := func() error {
		// PostgreSQL's receive functions' words for a value of the wrong size.
		return pgerror.New(pgerror.CodeInvalidBinaryRepresentation, "incorrect binary data format")
	}
	switch t {
	case TInt8:
		switch len(b) {
		case 8:
			return int64(binary.BigEndian.Uint64(b)), nil
		case 4:
			return int64(int32(binary.BigEndian.Uint32(b))), nil
		case 2:
			return int64(int16(binary.BigEndian.Uint16(b))), nil
		}
		return nil, bad()
	case TText:
		return string(b), nil
	case TBytea:
		return b, nil
	case TJSONB:
		if len(b) > 0 && b[0] == 1 {
			b = b[1:]
		}
		return ParseText(string(b), TJSONB)
	case TTimestamptz:
		if len(b) != 8 {
			return nil, bad()
		}
		return pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(b))) * time.Microsecond), nil
	case TInterval:
		if len(b) != 16 {
			return nil, bad()
		}
		us := int64(binary.BigEndian.Uint64(b))
		days := int32(binary.BigEndian.Uint32(b[8:]))
		months := int32(binary.BigEndian.Uint32(b[12:]))
		return time.Duration(us)*time.Microsecond + time.Duration(days)*24*time.Hour + time.Duration(months)*30*24*time.Hour, nil
	}
	return nil, bad()
}
