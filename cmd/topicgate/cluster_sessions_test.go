package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClusterSessionsAcrossGateways: sys.sessions, sys.transactions and
// sys.consumers' read_session show every gateway's sessions, each named by
// its gateway, whichever gateway is asked; a gateway that stopped
// gracefully is gone from them at once.
func TestClusterSessionsAcrossGateways(t *testing.T) {
	g := startGateways(t, 2, 5*time.Second)
	ctx := context.Background()
	a, b := connect(t, g.gws[0]), connect(t, g.gws[1])
	exec(t, a, "CREATE TOPIC s (CONSUMER c) WITH (min_active_partitions = 4)")
	exec(t, a, "INSERT INTO s (partition, data) VALUES (0, 'x'), (1, 'x'), (2, 'x'), (3, 'x')")
	exec(t, b, "SET application_name = 'on-b'")
	own := "SELECT gateway FROM sys.sessions WHERE pid = pg_backend_pid()"
	var gwA, gwB string
	require.NoError(t, a.QueryRow(ctx, own).Scan(&gwA))
	require.NoError(t, b.QueryRow(ctx, own).Scan(&gwB))
	require.NotEqual(t, gwA, gwB)
	bPid := b.PgConn().PID()

	// B reads consumer c in an open transaction: it is c's only reader, so
	// it holds all four partitions.
	exec(t, b, "BEGIN")
	require.Len(t, queryText(t, b, "SELECT offset FROM s WITH (CONSUMER = c) LIMIT 10"), 4)
	require.Equal(t, []string{fmt.Sprintf("%d on-b idle in transaction s/c:0,1,2,3 %s", bPid, gwB)},
		queryText(t, a, "SELECT pid, application_name, state, reading, gateway FROM sys.sessions WHERE gateway = $1", gwB),
		"A shows B's session")
	require.Equal(t, []string{fmt.Sprintf("%d open %s", bPid, gwB)},
		queryText(t, a, "SELECT pid, state, gateway FROM sys.transactions WHERE gateway = $1", gwB))
	require.Equal(t, []string{fmt.Sprintf("%d %s", a.PgConn().PID(), gwA), fmt.Sprintf("%d %s", bPid, gwB)},
		queryText(t, a, "SELECT pid, gateway FROM sys.sessions ORDER BY gateway = $1, pid", gwB), "every session of both")
	want := make([]string, 4)
	for p := range want {
		want[p] = fmt.Sprintf("%d %d %s", p, bPid, gwB)
	}
	require.Equal(t, want, queryText(t, a, "SELECT partition, read_session, read_gateway FROM sys.consumers WHERE topic = 's' ORDER BY partition"),
		"A names B's session as the reader of each partition")
	require.Equal(t, want, queryText(t, b, "SELECT partition, read_session, read_gateway FROM sys.consumers WHERE topic = 's' ORDER BY partition"),
		"and so does B")
	exec(t, b, "COMMIT")
	require.NoError(t, b.Close(ctx))

	// B's gateway stops gracefully: A stops showing it at once.
	require.NoError(t, g.gws[1].Close())
	require.Equal(t, []string{"0"}, queryText(t, a, "SELECT count(*) FROM sys.sessions WHERE gateway = $1", gwB))
	require.Equal(t, []string{fmt.Sprintf("%d %s", a.PgConn().PID(), gwA)}, queryText(t, a, "SELECT pid, gateway FROM sys.sessions"))
}

// TestClusterCancelThroughOtherGateway: a CancelRequest sent to gateway A
// for a session of gateway B (as happens behind one address for every
// gateway: the cancel opens a new connection) cancels B's statement.
func TestClusterCancelThroughOtherGateway(t *testing.T) {
	g := startGateways(t, 2, 5*time.Second)
	ctx := context.Background()
	a, b := connect(t, g.gws[0]), connect(t, g.gws[1])
	exec(t, a, "CREATE TOPIC quiet (CONSUMER c)")
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "SELECT data FROM quiet WITH (CONSUMER = c, WAIT = '30s') LIMIT 1")
		done <- err
	}()
	bPid := int64(b.PgConn().PID())
	waitFor(t, func() bool {
		var n int64
		require.NoError(t, a.QueryRow(ctx, "SELECT count(*) FROM sys.sessions WHERE pid = $1 AND gateway <> (SELECT gateway FROM sys.sessions WHERE pid = pg_backend_pid()) AND state = 'active'", bPid).Scan(&n))
		return n == 1
	})
	// A CancelRequest (length 16, code 80877102, pid, secret) to A.
	nc, err := net.Dial("tcp", g.gws[0].Addr())
	require.NoError(t, err)
	msg := binary.BigEndian.AppendUint32(nil, 16)
	msg = binary.BigEndian.AppendUint32(msg, 80877102)
	msg = binary.BigEndian.AppendUint32(msg, b.PgConn().PID())
	msg = append(msg, b.PgConn().SecretKey()...)
	_, err = nc.Write(msg)
	require.NoError(t, err)
	nc.Close()
	select {
	case err := <-done:
		require.Equal(t, "57014", pgCode(err), "B's statement was canceled: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("B's statement was not canceled through A")
	}
	// A wrong secret cancels nothing (B's next WAIT read runs to its end).
	go func() {
		_, err := b.Exec(ctx, "SELECT data FROM quiet WITH (CONSUMER = c, WAIT = '300ms') LIMIT 1")
		done <- err
	}()
	nc, err = net.Dial("tcp", g.gws[0].Addr())
	require.NoError(t, err)
	bad := append(msg[:12:12], 0, 0, 0, 0)
	_, err = nc.Write(bad)
	require.NoError(t, err)
	nc.Close()
	require.NoError(t, <-done)
}
