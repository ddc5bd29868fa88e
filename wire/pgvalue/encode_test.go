package pgvalue

import (
	"math"
	"testing"
	"time"
	"topicgate/sql/values"

	"github.com/stretchr/testify/require"
)

func TestEncodeText(t *testing.T) {
	for _, tc := range []struct {
		oid  uint32
		v    any
		want string
	}{
		{values.OIDFloat8, 1234567.0, "1234567"},
		{values.OIDFloat8, 1e15, "1e+15"},
		{values.OIDFloat8, 0.0001, "0.0001"},
		{values.OIDFloat8, 0.00001, "1e-05"},
		{values.OIDFloat8, math.Nextafter(0.3, 1), "0.30000000000000004"},
		{values.OIDFloat8, math.Inf(-1), "-Infinity"},
		{values.OIDFloat8, math.NaN(), "NaN"},
		{values.OIDFloat4, 1234567.0, "1.234567e+06"},
		{values.OIDFloat4, 1.5, "1.5"},
		{values.OIDInterval, Interval{}, "00:00:00"},
		{values.OIDInterval, 30 * time.Second, "00:00:30"},
		{values.OIDInterval, -30 * time.Second, "-00:00:30"},
		{values.OIDInterval, Interval{Months: 14, Days: 3, Microseconds: 4*3600e6 + 5*60e6 + 6e6 + 789000}, "1 year 2 mons 3 days 04:05:06.789"},
		{values.OIDInterval, Interval{Days: -1, Microseconds: 2 * 3600e6}, "-1 days +02:00:00"},
		{values.OIDInterval, Interval{Days: 1}, "1 day"},
		{values.OIDInterval, 100 * time.Hour, "100:00:00"},
		{values.OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", 3600)), "2026-11-29 21:26:20+01"},
		{values.OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.UTC), "2026-11-29 21:26:20+00"},
		{values.OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", 5*3600+30*60)), "2026-11-29 21:26:20+05:30"},
		{values.OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", -(3*3600+30*60))), "2026-11-29 21:26:20-03:30"},
		{values.OIDTimestamptz, time.Date(1890, 1, 1, 0, 0, 0, 0, time.FixedZone("LMT", 1*3600+20*60+28)), "1890-01-01 00:00:00+01:20:28"},
		{values.OIDTimestamptz, time.Date(2026, 11, 29, 20, 26, 20, 100000000, time.UTC), "2026-11-29 20:26:20.1+00"},
		{values.OIDTimestamp, time.Date(2026, 11, 29, 21, 26, 20, 5000, time.FixedZone("x", 3600)), "2026-11-29 21:26:20.000005"},
		{values.OIDTimestamptz, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "0001-01-01 00:00:00+00 BC"},
		{values.OIDTextArray, []any{"a", nil, "NULL", "x,y", `\`}, `{a,NULL,"NULL","x,y","\\"}`},
		{values.OIDInt8Array, []int64{}, "{}"},
		{values.OIDNumeric, int64(42), "42"},
		{values.OIDNumeric, 2.5, "2.5"},
		{values.OIDNumeric, 0.1 + 0.2, "0.3"},
		{values.OIDNumeric, 1.0 / 3, "0.333333333333333"},
		{values.OIDNumeric, 1e20, "100000000000000000000"},
		{values.OIDNumeric, -1.5e-7, "-0.00000015"},
		{values.OIDNumeric, math.NaN(), "NaN"},
		{values.OIDBytea, "ab", `\x6162`},
		{values.OIDInt4, int32(-5), "-5"},
		{values.OIDText, int64(5), "5"}, // mismatched Go type: best-effort text
	} {
		got, err := Append(nil, tc.oid, 0, tc.v)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got), tc.oid, tc.v)
	}
	_, err := Append(nil, values.OIDInt8, 1, "x")
	require.Error(t, err)
	_, err = Append(nil, values.OIDInt2, 1, int64(1<<20))
	require.Error(t, err)
}

func TestNumericBinaryRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "12345.678900", "0.0001", "-0.000012", "10000", "99999999.99", "1e5x", "NaN", "Infinity", "-Infinity", "0.000"} {
		b, err := appendNumericBinary(nil, s)
		if s == "1e5x" {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err, s)
		back, err := decodeNumericBinary(b)
		require.NoError(t, err, s)
		require.Equal(t, s, back, s)
	}
}

func TestDecodeText(t *testing.T) {
	iv := func(m, d int32, us int64) Interval { return Interval{Months: m, Days: d, Microseconds: us} }
	for _, tc := range []struct {
		oid  uint32
		in   string
		want any
	}{
		{values.OIDInterval, "00:00:30", iv(0, 0, 30e6)},
		{values.OIDInterval, "1 day 02:00:00", iv(0, 1, 2*3600e6)},
		{values.OIDInterval, "30 seconds", iv(0, 0, 30e6)},
		{values.OIDInterval, "5 min", iv(0, 0, 300e6)},
		{values.OIDInterval, "1.5 hours", iv(0, 0, 5400e6)},
		{values.OIDInterval, "@ 2 days ago", iv(0, -2, 0)},
		{values.OIDInterval, "1 year 2 mons", iv(14, 0, 0)},
		{values.OIDInterval, "PT1M30S", iv(0, 0, 90e6)},
		{values.OIDInterval, "P1DT2H", iv(0, 1, 2*3600e6)},
		{values.OIDInterval, "10", iv(0, 0, 10e6)},
		{values.OIDInterval, "250ms", iv(0, 0, 250e3)},
		{values.OIDTimestamptz, "2026-11-29 20:26:20.123456+00", time.Date(2026, 11, 29, 20, 26, 20, 123456000, time.UTC)},
		{values.OIDTimestamptz, "2026-11-29T21:26:20+01:00", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{values.OIDTimestamptz, "2026-11-29 15:26:20-0500", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{values.OIDTimestamptz, "2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{values.OIDTimestamp, "2026-11-29 20:26:20+05", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{values.OIDBool, "on", true},
		{values.OIDBool, "F", false},
		{values.OIDInt8Array, `{1,NULL}`, []any{int64(1), nil}},
		{values.OIDTextArray, `{"a\"b", c , "" }`, []string{`a"b`, "c", ""}},
		{values.OIDBoolArray, `{}`, []bool{}},
		{values.OIDFloat8, "-Infinity", math.Inf(-1)},
		{values.OIDBytea, `\x 00 ff`, []byte{0, 0xff}},
		{values.OIDUUID, "{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		{0, "anything", "anything"},
	} {
		got, err := decodeText(tc.oid, tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, tc := range []struct {
		oid uint32
		in  string
	}{
		{values.OIDInterval, "1 fortnight"}, {values.OIDInterval, ""}, {values.OIDTimestamptz, "2026-13-01"}, {values.OIDTimestamptz, "2026-02-30"},
		{values.OIDInt8Array, "{1,{2}}"}, {values.OIDInt8Array, "1,2"}, {values.OIDBool, "maybe"}, {values.OIDFloat8, "0x10"}, {values.OIDJSONB, "{"},
		{values.OIDText, "a\x00b"}, {values.OIDBytea, `\x0`}, {values.OIDNumeric, "abc"}, {values.OIDInt4, "3000000000"},
	} {
		_, err := decodeText(tc.oid, tc.in)
		require.Error(t, err, tc.in)
	}
}

func TestDecodeBinaryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		oid uint32
		v   any
	}{
		{values.OIDInt8, int64(-1)}, {values.OIDInt4, int64(7)}, {values.OIDInt2, int64(-3)}, {values.OIDBool, true}, {values.OIDFloat8, 2.5},
		{values.OIDText, "héllo"}, {values.OIDBytea, []byte{1, 2}}, {values.OIDJSONB, []byte(`{"a":1}`)}, {values.OIDJSON, []byte(`[1]`)},
		{values.OIDTimestamptz, time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)}, {values.OIDInterval, Interval{1, 2, 3}},
		{values.OIDInt8Array, []int64{1, 2, 3}}, {values.OIDTextArray, []string{"a", ""}}, {values.OIDBoolArray, []bool{false}},
		{values.OIDInt8Array, []any{int64(1), nil}}, {values.OIDInt8Array, []int64{}}, {values.OIDNumeric, "-1.50"},
	} {
		b, err := Append(nil, tc.oid, 1, tc.v)
		require.NoError(t, err, tc.oid)
		got, err := decodeBinary(tc.oid, b)
		require.NoError(t, err, tc.oid)
		require.Equal(t, tc.v, got, tc.oid)
	}
}

// TestDateStyle: a values.StyledTime prints in its style as text and as
// its instant in binary; a text date whose field order is ambiguous
// passes through undecoded, for the session to read in its DateStyle.
func TestDateStyle(t *testing.T) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 120000000, time.UTC)
	german := values.DateStyle{Output: values.DateGerman, Order: values.DMY}
	st := values.StyledTime{T: ts, Style: german}
	for oid, want := range map[uint32]string{values.OIDTimestamptz: "02.01.2024 03:04:05.12 UTC", values.OIDTimestamp: "02.01.2024 03:04:05.12", values.OIDDate: "02.01.2024"} {
		got, err := Append(nil, oid, 0, st)
		if err != nil || string(got) != want {
			t.Errorf("oid %d: got %q, %v; want %q", oid, got, err, want)
		}
		bin, err := Append(nil, oid, 1, st)
		plain, _ := Append(nil, oid, 1, ts)
		if err != nil || string(bin) != string(plain) {
			t.Errorf("oid %d binary: got %x, %v; want %x", oid, bin, err, plain)
		}
	}
	for _, oid := range []uint32{values.OIDDate, values.OIDTimestamptz, values.OIDTimestamp} {
		v, err := decodeText(oid, "01/02/2024")
		if err != nil || v != "01/02/2024" {
			t.Errorf("oid %d: decoded %v, %v; want the text", oid, v, err)
		}
	}
}
