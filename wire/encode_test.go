package wire

import (
	"math"
	"testing"
	"time"
	"topicgate/sql/values"
)

func TestEncodeText(t *testing.T) {
	for _, tc := range []struct {
		oid  uint32
		v    any
		want string
	}{
		{OIDFloat8, 1234567.0, "1234567"},
		{OIDFloat8, 1e15, "1e+15"},
		{OIDFloat8, 0.0001, "0.0001"},
		{OIDFloat8, 0.00001, "1e-05"},
		{OIDFloat8, math.Nextafter(0.3, 1), "0.30000000000000004"},
		{OIDFloat8, math.Inf(-1), "-Infinity"},
		{OIDFloat8, math.NaN(), "NaN"},
		{OIDFloat4, 1234567.0, "1.234567e+06"},
		{OIDFloat4, 1.5, "1.5"},
		{OIDInterval, Interval{}, "00:00:00"},
		{OIDInterval, 30 * time.Second, "00:00:30"},
		{OIDInterval, -30 * time.Second, "-00:00:30"},
		{OIDInterval, Interval{Months: 14, Days: 3, Microseconds: 4*3600e6 + 5*60e6 + 6e6 + 789000}, "1 year 2 mons 3 days 04:05:06.789"},
		{OIDInterval, Interval{Days: -1, Microseconds: 2 * 3600e6}, "-1 days +02:00:00"},
		{OIDInterval, Interval{Days: 1}, "1 day"},
		{OIDInterval, 100 * time.Hour, "100:00:00"},
		{OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", 3600)), "2026-11-29 21:26:20+01"},
		{OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.UTC), "2026-11-29 21:26:20+00"},
		{OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", 5*3600+30*60)), "2026-11-29 21:26:20+05:30"},
		{OIDTimestamptz, time.Date(2026, 11, 29, 21, 26, 20, 0, time.FixedZone("x", -(3*3600+30*60))), "2026-11-29 21:26:20-03:30"},
		{OIDTimestamptz, time.Date(1890, 1, 1, 0, 0, 0, 0, time.FixedZone("LMT", 1*3600+20*60+28)), "1890-01-01 00:00:00+01:20:28"},
		{OIDTimestamptz, time.Date(2026, 11, 29, 20, 26, 20, 100000000, time.UTC), "2026-11-29 20:26:20.1+00"},
		{OIDTimestamp, time.Date(2026, 11, 29, 21, 26, 20, 5000, time.FixedZone("x", 3600)), "2026-11-29 21:26:20.000005"},
		{OIDTimestamptz, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "0001-01-01 00:00:00+00 BC"},
		{OIDTextArray, []any{"a", nil, "NULL", "x,y", `\`}, `{a,NULL,"NULL","x,y","\\"}`},
		{OIDInt8Array, []int64{}, "{}"},
		{OIDNumeric, int64(42), "42"},
		{OIDNumeric, 2.5, "2.5"},
		{OIDNumeric, 0.1 + 0.2, "0.3"},
		{OIDNumeric, 1.0 / 3, "0.333333333333333"},
		{OIDNumeric, 1e20, "100000000000000000000"},
		{OIDNumeric, -1.5e-7, "-0.00000015"},
		{OIDNumeric, math.NaN(), "NaN"},
		{OIDBytea, "ab", `\x6162`},
		{OIDInt4, int32(-5), "-5"},
		{OIDText, int64(5), "5"}, // mismatched Go type: best-effort text
	} {
		got, err := appendValue(nil, tc.oid, 0, tc.v)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got), tc.oid, tc.v)
	}
	_, err := appendValue(nil, OIDInt8, 1, "x")
	require.Error(t, err)
	_, err = appendValue(nil, OIDInt2, 1, int64(1<<20))
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
		{OIDInterval, "00:00:30", iv(0, 0, 30e6)},
		{OIDInterval, "1 day 02:00:00", iv(0, 1, 2*3600e6)},
		{OIDInterval, "30 seconds", iv(0, 0, 30e6)},
		{OIDInterval, "5 min", iv(0, 0, 300e6)},
		{OIDInterval, "1.5 hours", iv(0, 0, 5400e6)},
		{OIDInterval, "@ 2 days ago", iv(0, -2, 0)},
		{OIDInterval, "1 year 2 mons", iv(14, 0, 0)},
		{OIDInterval, "PT1M30S", iv(0, 0, 90e6)},
		{OIDInterval, "P1DT2H", iv(0, 1, 2*3600e6)},
		{OIDInterval, "10", iv(0, 0, 10e6)},
		{OIDInterval, "250ms", iv(0, 0, 250e3)},
		{OIDTimestamptz, "2026-11-29 20:26:20.123456+00", time.Date(2026, 11, 29, 20, 26, 20, 123456000, time.UTC)},
		{OIDTimestamptz, "2026-11-29T21:26:20+01:00", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{OIDTimestamptz, "2026-11-29 15:26:20-0500", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{OIDTimestamptz, "2026-11-29", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)},
		{OIDTimestamp, "2026-11-29 20:26:20+05", time.Date(2026, 11, 29, 20, 26, 20, 0, time.UTC)},
		{OIDBool, "on", true},
		{OIDBool, "F", false},
		{OIDInt8Array, `{1,NULL}`, []any{int64(1), nil}},
		{OIDTextArray, `{"a\"b", c , "" }`, []string{`a"b`, "c", ""}},
		{OIDBoolArray, `{}`, []bool{}},
		{OIDFloat8, "-Infinity", math.Inf(-1)},
		{OIDBytea, `\x 00 ff`, []byte{0, 0xff}},
		{OIDUUID, "{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
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
		{OIDInterval, "1 fortnight"}, {OIDInterval, ""}, {OIDTimestamptz, "2026-13-01"}, {OIDTimestamptz, "2026-02-30"},
		{OIDInt8Array, "{1,{2}}"}, {OIDInt8Array, "1,2"}, {OIDBool, "maybe"}, {OIDFloat8, "0x10"}, {OIDJSONB, "{"},
		{OIDText, "a\x00b"}, {OIDBytea, `\x0`}, {OIDNumeric, "abc"}, {OIDInt4, "3000000000"},
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
		{OIDInt8, int64(-1)}, {OIDInt4, int64(7)}, {OIDInt2, int64(-3)}, {OIDBool, true}, {OIDFloat8, 2.5},
		{OIDText, "héllo"}, {OIDBytea, []byte{1, 2}}, {OIDJSONB, []byte(`{"a":1}`)}, {OIDJSON, []byte(`[1]`)},
		{OIDTimestamptz, time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)}, {OIDInterval, Interval{1, 2, 3}},
		{OIDInt8Array, []int64{1, 2, 3}}, {OIDTextArray, []string{"a", ""}}, {OIDBoolArray, []bool{false}},
		{OIDInt8Array, []any{int64(1), nil}}, {OIDInt8Array, []int64{}}, {OIDNumeric, "-1.50"},
	} {
		b, err := appendValue(nil, tc.oid, 1, tc.v)
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
	for oid, want := range map[uint32]string{OIDTimestamptz: "02.01.2024 03:04:05.12 UTC", OIDTimestamp: "02.01.2024 03:04:05.12", OIDDate: "02.01.2024"} {
		got, err := appendValue(nil, oid, 0, st)
		if err != nil || string(got) != want {
			t.Errorf("oid %d: got %q, %v; want %q", oid, got, err, want)
		}
		bin, err := appendValue(nil, oid, 1, st)
		plain, _ := appendValue(nil, oid, 1, ts)
		if err != nil || string(bin) != string(plain) {
			t.Errorf("oid %d binary: got %x, %v; want %x", oid, bin, err, plain)
		}
	}
	for _, oid := range []uint32{OIDDate, OIDTimestamptz, OIDTimestamp} {
		v, err := decodeText(oid, "01/02/2024")
		if err != nil || v != "01/02/2024" {
			t.Errorf("oid %d: decoded %v, %v; want the text", oid, v, err)
		}
	}
}
