package wire

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"

	"topicgate/wire/pgvalue"
)

// output implements Output for the portal being executed. One per
// connection, reset before every Execute.
type output struct {
	c       *conn
	cols    []Column
	formats []int16 // per column; nil means all text

	copyActive bool // CopyInResponse sent, CopyDone/CopyFail not yet read
	syncLost   bool // a message other than COPY's came during COPY FROM STDIN

	// desc is the simple protocol's RowDescription, not sent yet: it goes
	// out before the first row (or the CommandComplete).
	desc *pgproto3.RowDescription

	// encBuf is the last RowEncoder's buffer, reused by the next one so a
	// connection reading in a loop does not regrow it every statement.
	encBuf []byte
}

// maxKeptEncBuf caps the encoder buffer a connection keeps between
// statements: a 1000-row read of 100-byte messages is 135 KB of DataRows,
// which append's growth leaves in a buffer of more than 128 KiB; 512 KiB
// keeps it (and rows of up to about 400 bytes) for a connection that reads
// that much. At 128 KiB such a read regrew its buffer from empty every
// time: BenchmarkConsumeRead went from 0.90-0.93M to 1.19-1.22M msgs/s.
const maxKeptEncBuf = 512 << 10

func (o *output) reset(cols []Column, formats []int16) {
	o.cols, o.formats, o.copyActive, o.desc, o.syncLost = cols, formats, false, nil, false
}

// sendDesc sends the pending RowDescription, if any.
func (o *output) sendDesc() {
	if o.desc != nil {
		o.c.send(o.desc)
		o.desc = nil
	}
}

// WriteRow encodes one DataRow straight into the connection's buffer.
func (o *output) WriteRow(vals []any) error {
	if len(vals) != len(o.cols) {
		return newError("XX000", fmt.Sprintf("internal error: row has %d values, but the result has %d columns", len(vals), len(o.cols)))
	}
	o.sendDesc()
	c := o.c
	buf := append(c.wbuf[:0], 'D', 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(vals)))
	var err error
	for i, v := range vals {
		if v == nil {
			buf = append(buf, 0xFF, 0xFF, 0xFF, 0xFF)
			continue
		}
		var f int16
		if o.formats != nil {
			f = o.formats[i]
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		if buf, err = pgvalue.Append(buf, o.cols[i].TypeOID, f, v); err != nil {
			c.wbuf = buf
			return err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	binary.BigEndian.PutUint32(buf[1:], uint32(len(buf)-1))
	c.wbuf = buf
	_, err = c.bw.Write(buf)
	return err
}

// RowEncoder implements Output.
func (o *output) RowEncoder() *RowEncoder {
	e := newRowEncoder(o.cols, o.formats)
	e.buf, o.encBuf = o.encBuf[:0], nil
	return e
}

// WriteRows implements Output.
func (o *output) WriteRows(e *RowEncoder) error {
	if e.row >= 0 {
		return newError("XX000", "internal error: WriteRows with a row still open")
	}
	if len(e.buf) > 0 {
		o.sendDesc()
	}
	_, err := o.c.bw.Write(e.buf)
	if cap(e.buf) <= maxKeptEncBuf {
		o.encBuf = e.buf[:0]
	}
	e.buf = nil
	return err
}

// Flush implements Output.
func (o *output) Flush() error {
	if err := o.c.bw.Flush(); err != nil {
		return newError("08006", "could not send data to client: "+err.Error())
	}
	if o.c.peerGone() {
		return newError("08006", "could not send data to client: "+errClientGone.Error())
	}
	return nil
}

// Notice sends a NoticeResponse.
func (o *output) Notice(code, msg string) {
	o.c.send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: code, Message: msg})
}

// Warning sends a NoticeResponse of severity WARNING.
func (o *output) Warning(code, msg string) {
	o.c.send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: code, Message: msg})
}

// CopyIn sends CopyInResponse and returns a reader of the client's data.
func (o *output) CopyIn(format int16, columns int) (CopyReader, error) {
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
	o.c.pauseWatch() // the COPY reads the socket now, and sees a hangup itself
	o.c.send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	if err := o.c.bw.Flush(); err != nil {
		return nil, err
	}
	o.copyActive = true
	return copyReader{o}, nil
}

type copyReader struct{ o *output }

// Next returns the next CopyData payload; io.EOF at CopyDone.
func (r copyReader) Next() ([]byte, error) {
	o := r.o
	if !o.copyActive {
		return nil, io.EOF
	}
	for {
		msg, err := o.c.be.Receive()
		if err != nil {
			o.copyActive = false
			o.c.receiveError(err)
			o.c.fatal = true
			return nil, newError("08006", "connection lost during COPY: "+err.Error())
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			return m.Data, nil
		case *pgproto3.CopyDone:
			o.copyActive = false
			o.c.rearmWatch()
			return nil, io.EOF
		case *pgproto3.CopyFail:
			o.copyActive = false
			o.c.rearmWatch()
			return nil, newError("57014", "COPY from stdin failed: "+m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
			// Ignored during COPY, as PostgreSQL does.
		default:
			// The message is lost, and so is the stream's framing: the
			// portal reports the error, then copyLost ends the connection.
			o.copyActive, o.syncLost = false, true
			return nil, newError("08P01", fmt.Sprintf("unexpected message type 0x%02X during COPY from stdin", msgType(msg)))
		}
	}
}

// drainCopy discards the rest of a COPY stream the portal stopped reading
// (for instance after an error), up to CopyDone or CopyFail.
func (c *conn) drainCopy() {
	r := copyReader{&c.out}
	for c.out.copyActive {
		if _, err := r.Next(); err != nil {
			return
		}
	}
}

// copyLost reports err, the portal's error, and ends the connection as
// PostgreSQL does when a COPY FROM STDIN got a message of another kind:
// the ERROR, then FATAL "protocol synchronization was lost". It reports
// whether that was the case.
func (c *conn) copyLost(err error) bool {
	if !c.out.syncLost {
		return false
	}
	c.out.syncLost = false
	c.sendError(err)
	c.sendErrorSeverity("FATAL", newError("08P01", "terminating connection because protocol synchronization was lost"))
	_ = c.bw.Flush()
	c.fatal = true
	return true
}
