// Package pgvalue converts values to and from PostgreSQL's text and binary
// formats, by type OID (the OIDs are sql/values'): Append encodes a result
// value into a DataRow or COPY buffer, DecodeParam decodes a Bind
// parameter, CanBinary says which types a result may be sent in binary.
// It owns the formats only; the wire package builds the messages around
// them, and package wire's handler.go lists the Go representation of each
// type (Interval, this package's, is the one that is not a plain Go type).
//
//   - encode.go, encode_types.go: text and binary output. The hot types
//     (int8, bytea, text, timestamptz) are appended into the caller's
//     buffer without allocation. Floats print as PostgreSQL's shortest
//     round-trip text; numeric, arrays, intervals, dates and timestamps
//     as PostgreSQL 15 prints them, dates and timestamps in ISO style
//     unless the value is a values.StyledTime (a session with another
//     DateStyle), which prints in its style.
//   - decode.go, decode_types.go, decode_array.go: text and binary input
//     of Bind parameters. A text date whose field order is ambiguous
//     ('01/02/2024') is passed on as text for the session to read in its
//     DateStyle; a parameter of OID 0 (unknown) arrives untouched.
//   - errors.go: Error, the SQLSTATE-carrying error of a value that does
//     not encode or decode, with the codes and words of PostgreSQL's
//     input, output, send and receive functions.
//
// # Invariants
//
//   - A decoded value never aliases the message bytes it came from: they
//     are only valid until the connection's next read.
//   - Encoding and decoding are pure: no state, no I/O, safe for
//     concurrent use; the package knows nothing of connections or
//     protocol messages.
//   - A binary value of the wrong size is refused as PostgreSQL's receive
//     functions refuse it: too short is 08P01, bytes left over 22P03.
package pgvalue
