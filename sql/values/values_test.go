package values

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"topicgate/sql/pgerror"
)

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]string{
		"PT30S": "00:00:30", "P2D": "2 days", "PT1H30M": "01:30:00", "P1DT2H": "1 day 02:00:00",
		"30 seconds": "00:00:30", "1 day 02:00:00": "1 day 02:00:00", "5m": "00:05:00", "-1 hour": "-01:00:00",
		"1 week": "7 days", "00:00:01.5": "00:00:01.5",
	} {
		d, err := ParseInterval(in)
		require.NoError(t, err, in)
		require.Equal(t, want, FormatInterval(d), in)
	}
	for _, bad := range []string{"", "P", "PTXS", "forever", "1 fortnight"} {
		_, err := ParseInterval(bad)
		require.Error(t, err, bad)
	}
}

func TestValues(t *testing.T) {
	b, err := ParseBytea(`\x00ff`)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0xff}, b)
	b, err = ParseBytea(`a\\b\001`)
	require.NoError(t, err)
	require.Equal(t, []byte("a\\b\x01"), b)
	// \377 is the highest octal escape; \777 is refused, as PostgreSQL does.
	b, err = ParseBytea(`\377`)
	require.NoError(t, err)
	require.Equal(t, []byte{0xff}, b)
	_, err = ParseBytea(`\777`)
	require.Equal(t, "22P02", pgerror.Code(err))
	j, err := NormalizeJSONB(`{"bb":1,"a":{"z":true,"y":[1,2]}}`)
	require.NoError(t, err)
	require.Equal(t, `{"a": {"y": [1, 2], "z": true}, "bb": 1}`, j)
	_, err = ParseText("70000", TInt2)
	require.Error(t, err)
	ts, err := ParseTimestamp("2026-01-02 03:04:05+00")
	require.NoError(t, err)
	require.Equal(t, "2026-01-02 03:04:05+00", FormatText(ts))
}

func TestCompareAndArith(t *testing.T) {
	c, err := Compare(int64(2), 2.5)
	require.NoError(t, err)
	require.Equal(t, -1, c)
	_, err = IntArith("+", 1<<62, 1<<62)
	require.Error(t, err)
}

func TestDateStyle(t *testing.T) {
	for _, s := range []string{"ISO, MDY", "SQL, DMY", "Postgres, YMD", "German, DMY"} {
		ds, ok := ParseDateStyle(s)
		require.True(t, ok, s)
		require.Equal(t, s, ds.String())
	}
	_, ok := ParseDateStyle("iso")
	require.False(t, ok)
	require.Equal(t, DateStyle{}, DateStyle{Output: DateISO, Order: MDY}, "the zero value is the default")

	for in, want := range map[string]bool{
		"01/02/2024": true, "1-2-24": true, "02.01.2024 10:00": true, "2024/01/02": false,
		"2024-01-02": false, "epoch": false, "01/02": false, "a1/02/03": false,
	} {
		require.Equal(t, want, DateOrderMatters(in), in)
	}

	ts := time.Date(12345, 6, 7, 8, 9, 10, 500, time.UTC) // rounds to the microsecond
	require.Equal(t, "06/07/12345 08:09:10.000001 UTC", string(AppendTimestamp(nil, ts, true, DateStyle{Output: DateSQL})))
	require.Equal(t, "07.06.12345", string(AppendDate(nil, ts, DateStyle{Output: DateGerman})))
	require.Equal(t, "12345-06-07 08:09:10.000001", string(AppendTimestamp(nil, ts, false, DateStyle{})))
}
