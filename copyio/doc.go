// Package copyio owns COPY's data formats: decoding COPY ... FROM STDIN's
// text, csv and binary data into rows of values (Decoder) and encoding
// COPY ... TO STDOUT's rows in the same three formats (Encoder), as
// PostgreSQL 15 reads and writes them. What a COPY does with its rows
// stays with the session (the executor): building messages from a row,
// staging them in the statement's transaction and committing it (its
// write route, inWriteTxn), and running the query whose rows COPY TO
// sends.
//
// Files:
//   - decode.go: Decoder, the binary format (signature, header, tuples of
//     length-prefixed fields parsed by values.ParseBinary), and where a
//     COPY is in its data (copyPos) for its errors' context: "COPY t,
//     line 3, column data: ...", as PostgreSQL words it.
//   - decode_text.go: the text format (delimiter, NULL marker, backslash
//     escapes, the \. end marker, HEADER) and the csv format (quote,
//     escape, quoted fields across lines); a date of numeric fields reads
//     in the session's DateStyle order (values.ParseTextIn), as a literal
//     does.
//   - encode.go: Encoder, the text and csv escaping and quoting of a
//     value's text (wire.AppendValue), and the binary format's framing.
//
// Invariants: a stream that is not well formed fails with 22P04
// (bad_copy_file_format) and a field that does not parse with its type's
// error, each with the line (binary: tuple) and column as its context;
// after an error the decoder reads the rest of the stream, so the
// connection stays in step with the client; every error carries a
// SQLSTATE (pgerror). A binary field is bounded (topicstore.MaxMessageSize
// plus 1 MiB, 54000 beyond it). The package reads a wire.CopyReader and
// never touches the store or a transaction.
package copyio
