package main

// The read-process-write floor: what any server must do for the bench's
// rpw workload under topicgate's promises for a transaction. BEGIN opens
// it; a streaming consumer's read inside it takes the next rows of the
// session's partition without storing the position; INSERTs are staged in
// the session; COMMIT makes the staged messages and the new position
// durable together (one synced write) before it answers, and ROLLBACK
// puts the position back. It skips staging on disk, other sessions' views
// of the staged messages (none may see them before COMMIT anyway) and
// conflicts (a partition is one session's).

// txnStatement runs BEGIN, COMMIT or ROLLBACK for session ss and returns
// its command tag. COMMIT or ROLLBACK with no transaction open does
// nothing, as in PostgreSQL (which warns).
func (st *state) txnStatement(verb string, ss *session) string {
	switch {
	case verb == "BEGIN":
		if ss.tx == nil {
			ss.tx = &txn{from: -1}
		}
	case ss.tx == nil:
	case verb == "COMMIT":
		tx := ss.tx
		ss.tx = nil
		recs := tx.staged
		if tx.pos != nil {
			recs = append(recs[:len(recs):len(recs)], tx.pos)
		}
		if len(recs) > 0 {
			st.log.write(recs)
		}
		if len(tx.staged) > 0 {
			st.mu.Lock()
			t := st.table(tx.table)
			t.stored += int64(len(tx.staged))
			t.bodies = append(t.bodies, tx.staged...)
			st.mu.Unlock()
		}
	default: // ROLLBACK
		if ss.tx.from >= 0 {
			st.queue.rewind(ss.claimed, ss.tx.from)
		}
		ss.tx = nil
	}
	return verb
}

// stage keeps an INSERT's bodies (the last column of each row, as the
// bench's statements list it) for COMMIT, and returns how many.
func (tx *txn) stage(p portal) int {
	width := len(p.cols)
	if width == 0 {
		return 0
	}
	tx.table = p.table
	n := 0
	for r := 0; r+width <= len(p.args); r += width {
		tx.staged = append(tx.staged, p.args[r+width-1]) // the portal's own copy
		n++
	}
	return n
}

// rewind puts partition p's position back to off (a rolled-back read).
func (q *queue) rewind(p, off int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p >= 0 && p < len(q.next) {
		q.next[p] = off
	}
}

// position returns partition p's position.
func (q *queue) position(p int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.next[p]
}
