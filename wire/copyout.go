package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"topicgate/wire/pgvalue"
)

// CopyWriter sends the data of a COPY ... TO STDOUT.
type CopyWriter interface {
	// Write sends one CopyData message holding data (the executor formats
	// rows; data may be reused after the call).
	Write(data []byte) error
	// Done sends CopyDone. The portal then returns its "COPY n" tag.
	Done() error
}

// CopyOut implements Output: it sends CopyOutResponse with the given
// column count and format (0 text, 1 binary).
func (o *output) CopyOut(format int16, columns int) (CopyWriter, error) {
	if o.copyActive {
		return nil, newError("XX000", "internal error: COPY already in progress")
	}
	if format != 0 && format != 1 {
		return nil, newError("XX000", fmt.Sprintf("internal error: invalid COPY format %d", format))
	}
	codes := make([]uint16, columns)
	for i := range codes {
		codes[i] = uint16(format)
	}
	o.c.send(&pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	return copyWriter{o}, nil
}

type copyWriter struct{ o *output }

func (w copyWriter) Write(data []byte) error {
	c := w.o.c
	var hdr [5]byte
	hdr[0] = 'd'
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(data)+4))
	if _, err := c.bw.Write(hdr[:]); err != nil {
		return err
	}
	_, err := c.bw.Write(data)
	return err
}

func (w copyWriter) Done() error {
	_, err := w.o.c.bw.Write([]byte{'c', 0, 0, 0, 4})
	return err
}

// AppendValue appends v encoded as a value of type oid, in the binary
// format or else in the text format, exactly as a DataRow field carries it
// (COPY TO uses the same representations).
func AppendValue(buf []byte, oid uint32, binaryFormat bool, v any) ([]byte, error) {
	var f int16
	if binaryFormat {
		f = 1
	}
	return pgvalue.Append(buf, oid, f, v)
}
