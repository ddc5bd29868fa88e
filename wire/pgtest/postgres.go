package pgtest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// PGBin is where the reference PostgreSQL 15 is installed.
const PGBin = "/usr/lib/postgresql/15/bin"

// StartPostgres initialises a PostgreSQL 15 cluster in a new temporary
// directory and starts it on a free 127.0.0.1 port, as the "postgres" OS
// user when the test runs as root (PostgreSQL refuses to run as root);
// it stops and is removed when the test ends. Every user may connect
// without a password but AuthUser, who must give AuthPassword (cleartext).
// The server speaks English and UTC, like topicgate.
func StartPostgres(t testing.TB) Target {
	t.Helper()
	if _, err := os.Stat(filepath.Join(PGBin, "postgres")); err != nil {
		t.Skipf("no PostgreSQL 15: %v", err)
	}
	dir, err := os.MkdirTemp("", "pgtest-pg15-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, and no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	command := func(name string, args ...string) *exec.Cmd {
		argv := append(append(asUser, filepath.Join(PGBin, name)), args...)
		return exec.Command(argv[0], argv[1:]...)
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "--auth=trust", "--username=postgres", "--encoding=UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	hba := fmt.Sprintf("host all %s 127.0.0.1/32 password\nhost all all 127.0.0.1/32 trust\nlocal all all trust\n", AuthUser)
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := command("postgres", "-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", dir,
		"-c", "fsync=off", "-c", "timezone=UTC", "-c", "lc_messages=C", "-c", "logging_collector=off")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := command("pg_ctl", "stop", "-D", data, "-m", "fast", "-w").CombinedOutput(); err != nil {
			t.Errorf("pg_ctl stop: %v\n%s", err, out)
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
	})
	// The server says when it is ready; nothing is polled.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var log []string
		for sc.Scan() {
			log = append(log, sc.Text())
			if strings.Contains(sc.Text(), "database system is ready to accept connections") {
				ready <- nil
				for sc.Scan() {
				}
				return
			}
		}
		ready <- fmt.Errorf("postgres exited:\n%s", strings.Join(log, "\n"))
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("postgres did not start within a minute")
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	setup := fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", AuthUser, AuthPassword)
	if err := simpleExec(addr, setup); err != nil {
		t.Fatal(err)
	}
	return Target{Postgres: true, Addr: addr, AuthAddr: addr}
}

// simpleExec runs one statement as user postgres.
func simpleExec(addr, query string) error {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(readTimeout))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
	fe.Send(&pgproto3.Query{String: query})
	if err := fe.Flush(); err != nil {
		return err
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("%s: %s %s", query, m.Code, m.Message)
		case *pgproto3.CommandComplete:
			return nil
		}
	}
}
