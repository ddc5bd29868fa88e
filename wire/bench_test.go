package wire

import (
	"bufio"
	"io"
	"testing"
	"time"
)

// BenchmarkEncodeRows measures DataRow encoding of (int8, int8, bytea 100 B)
// rows into the connection's buffered writer.
func BenchmarkEncodeRows(b *testing.B) {
	cols := []Column{{Name: "partition", TypeOID: OIDInt8}, {Name: "offset", TypeOID: OIDInt8}, {Name: "value", TypeOID: OIDBytea}}
	payload := make([]byte, 100)
	for i := range payload {
		payload[i] = byte(i)
	}
	for _, tc := range []struct {
		name    string
		formats []int16
	}{{"binary", []int16{1, 1, 1}}, {"text", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			c := &conn{bw: bufio.NewWriterSize(io.Discard, writeBufSize)}
			c.out.c = c
			c.out.reset(cols, tc.formats)
			row := []any{int64(3), int64(0), payload}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				row[1] = int64(i)
				if err := c.out.WriteRow(row); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

func TestEncodeRowAllocFree(t *testing.T) {
	cols := []Column{{TypeOID: OIDInt8}, {TypeOID: OIDBytea}, {TypeOID: OIDText}, {TypeOID: OIDTimestamptz}}
	c := &conn{bw: bufio.NewWriterSize(io.Discard, writeBufSize)}
	c.out.c = c
	row := []any{int64(12345), []byte("some bytes"), "some text", time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)}
	for _, formats := range [][]int16{nil, {1, 1, 1, 1}} {
		c.out.reset(cols, formats)
		allocs := testing.AllocsPerRun(100, func() {
			if err := c.out.WriteRow(row); err != nil {
				t.Fatal(err)
			}
		})
		require.Equal(t, 0.0, allocs, formats)
	}
}
