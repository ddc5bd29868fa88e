package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The group scenario of issue 28 with each client library that is not
// franz-go (whose members are tested in kafka_groups_test.go): two
// members of a group, each in a process of its own, share a topic's four
// partitions two and two; both read and commit; one is killed (SIGKILL:
// it never leaves the group), its session times out and the other takes
// all four partitions, reading everything the dead one had not
// committed; then that one stops, and a restarted member reads only what
// was produced after the last commit.
//
// Delivery is at least once: the records the killed member read but had
// not committed are read again by the survivor, and nothing else is
// read twice. No record is lost: every one is read by some member.

// The scenario's sizes: partitions, records before the kill, records
// after the stop, and how many of its reads the killed member commits.
const (
	membersParts   = 4
	membersRecords = 40
	membersLater   = 8
	membersBCommit = 6
)

// memberRead is a record a member printed it read.
type memberRead struct {
	part  int32
	off   int64
	value string
}

// lockedBuffer is a child's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// groupMember is a group member in a child process speaking the line
// protocol of testdata/kafka/confluent_member.py: "assigned 0,1", "read
// P O V", "committed P O", "closed". The test reads its lines through a
// pipe as they come; they are its only sync points.
type groupMember struct {
	name   string
	cmd    *osexec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed

	assigned  []int32 // the last assignment it printed
	reads     []memberRead
	commits   int
	committed map[int32]int64 // partition: the last offset it committed
	closed    bool
}

// startMember starts cmd as member name; it is killed at the end of the
// test if it is still running.
func startMember(t *testing.T, name string, cmd *osexec.Cmd) *groupMember {
	t.Helper()
	m := &groupMember{name: name, cmd: cmd, lines: make(chan string, 1024), stderr: &lockedBuffer{},
		exited: make(chan struct{}), committed: map[int32]int64{}}
	cmd.Stderr = m.stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	m.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			m.lines <- sc.Text()
		}
		close(m.lines)
		m.err = cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		for range m.lines {
		}
		<-m.exited
	})
	return m
}

// until reads m's lines until cond holds, failing the test if m exits
// or ctx ends first.
func (m *groupMember) until(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case line, ok := <-m.lines:
			if !ok {
				<-m.exited
				t.Fatalf("member %s exited (%v) waiting for %s\nstderr:\n%s", m.name, m.err, what, m.stderr)
			}
			m.apply(t, line)
		case <-ctx.Done():
			t.Fatalf("member %s: no %s in time (assigned %v, %d reads, %d commits)\nstderr:\n%s",
				m.name, what, m.assigned, len(m.reads), m.commits, m.stderr)
		}
	}
}

func (m *groupMember) apply(t *testing.T, line string) {
	t.Helper()
	t.Logf("%s %s: %s", time.Now().Format("05.000"), m.name, line)
	f := strings.Fields(line)
	bad := func(err error) {
		if err != nil {
			t.Fatalf("member %s printed %q: %v", m.name, line, err)
		}
	}
	switch {
	case len(f) >= 1 && f[0] == "assigned":
		m.assigned = nil
		if len(f) == 2 {
			for _, s := range strings.Split(f[1], ",") {
				p, err := strconv.ParseInt(s, 10, 32)
				bad(err)
				m.assigned = append(m.assigned, int32(p))
			}
		}
		slices.Sort(m.assigned)
	case len(f) == 4 && f[0] == "read":
		p, err := strconv.ParseInt(f[1], 10, 32)
		bad(err)
		o, err := strconv.ParseInt(f[2], 10, 64)
		bad(err)
		m.reads = append(m.reads, memberRead{int32(p), o, f[3]})
	case len(f) == 3 && f[0] == "committed":
		p, err := strconv.ParseInt(f[1], 10, 32)
		bad(err)
		o, err := strconv.ParseInt(f[2], 10, 64)
		bad(err)
		m.commits++
		m.committed[int32(p)] = o
	case line == "closed":
		m.closed = true
	default:
		t.Fatalf("member %s printed %q", m.name, line)
	}
}

// kill kills m (SIGKILL: it does not leave the group) and waits for it.
func (m *groupMember) kill(t *testing.T, ctx context.Context) {
	t.Helper()
	require.NoError(t, m.cmd.Process.Kill())
	for range m.lines {
	}
	select {
	case <-m.exited:
	case <-ctx.Done():
		t.Fatalf("member %s outlived its SIGKILL", m.name)
	}
}

// stop closes m's stdin, which has it leave the group and exit, and
// waits for it to exit cleanly.
func (m *groupMember) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	require.NoError(t, m.stdin.Close())
	m.until(t, ctx, "closed", func() bool { return m.closed })
	for line := range m.lines {
		m.apply(t, line)
	}
	select {
	case <-m.exited:
		require.NoError(t, m.err, "member %s\nstderr:\n%s", m.name, m.stderr)
	case <-ctx.Done():
		t.Fatalf("member %s printed closed but did not exit", m.name)
	}
}

// readsOf are m's reads of the partitions parts (all when nil), as
// "P:O=V", sorted.
func (m *groupMember) readsOf(parts []int32) []string {
	var out []string
	for _, r := range m.reads {
		if parts == nil || slices.Contains(parts, r.part) {
			out = append(out, fmt.Sprintf("%d:%d=%s", r.part, r.off, r.value))
		}
	}
	sort.Strings(out)
	return out
}

// wantReads are the records of partitions parts from the offsets from
// (0 when missing) to the offset to, as readsOf shows them: value i is in
// partition i % membersParts at offset i / membersParts.
func wantReads(parts []int32, from map[int32]int64, to int64) []string {
	var out []string
	for _, p := range parts {
		for o := from[p]; o < to; o++ {
			out = append(out, fmt.Sprintf("%d:%d=%d", p, o, int64(p)+o*membersParts))
		}
	}
	sort.Strings(out)
	return out
}

// produceMembersRecords produces the values from..to-1 to topic, value i
// to partition i % membersParts.
func produceMembersRecords(t *testing.T, a *app, topic string, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % membersParts), Value: []byte(strconv.Itoa(i))})
	}
	require.NoError(t, kafkaClient(t, a).ProduceSync(testCtx(t), recs...).FirstErr())
}

// kafkaGroupAssignments are the partitions of topic each member of group
// holds, as sys.kafka_groups shows them ("topic[0,1]"), sorted.
func kafkaGroupAssignments(t *testing.T, a *app, topic, group string) [][]int32 {
	t.Helper()
	var out [][]int32
	for _, s := range queryText(t, connect(t, a), `SELECT assignment FROM sys.kafka_groups WHERE "group" = $1`, group) {
		inner, ok := strings.CutPrefix(s, topic+"[")
		require.True(t, ok, "assignment %q", s)
		var ps []int32
		for _, f := range strings.Split(strings.TrimSuffix(inner, "]"), ",") {
			p, err := strconv.ParseInt(f, 10, 32)
			require.NoError(t, err, "assignment %q", s)
			ps = append(ps, int32(p))
		}
		slices.Sort(ps)
		out = append(out, ps)
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// runMembersScenario runs the scenario on topic and group with members
// started by member(name, commits): a member of group on topic that
// commits only its first commits reads (all when -1).
func runMembersScenario(t *testing.T, a *app, topic, group string, member func(name string, commits int) *osexec.Cmd) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	exec(t, connect(t, a), fmt.Sprintf("CREATE TOPIC %s WITH (min_active_partitions = %d)", topic, membersParts))
	all := []int32{0, 1, 2, 3}

	// A alone holds every partition; B joins and they hold two each.
	ma := startMember(t, "A", member("A", -1))
	ma.until(t, ctx, "A's first assignment", func() bool { return len(ma.assigned) == membersParts })
	mb := startMember(t, "B", member("B", membersBCommit))
	mb.until(t, ctx, "B's assignment", func() bool { return len(mb.assigned) == 2 })
	ma.until(t, ctx, "A's half", func() bool { return len(ma.assigned) == 2 })
	require.ElementsMatch(t, all, append(slices.Clone(ma.assigned), mb.assigned...), "balanced: each partition to one member")
	want := [][]int32{ma.assigned, mb.assigned}
	slices.SortFunc(want, slices.Compare)
	require.Equal(t, want, kafkaGroupAssignments(t, a, topic, group), "sys.kafka_groups")

	// Both read their partitions; A commits all it reads, B its first
	// few only.
	perPart := int64(membersRecords / membersParts)
	produceMembersRecords(t, a, topic, 0, membersRecords)
	mb.until(t, ctx, "B's reads", func() bool { return len(mb.reads) == membersRecords/2 && mb.commits == membersBCommit })
	ma.until(t, ctx, "A's reads", func() bool { return len(ma.reads) == membersRecords/2 && ma.commits == membersRecords/2 })
	require.Equal(t, wantReads(mb.assigned, nil, perPart), mb.readsOf(nil))
	require.Equal(t, wantReads(ma.assigned, nil, perPart), ma.readsOf(nil))
	bParts, bCommitted := mb.assigned, mb.committed

	// B is killed: it does not leave, its session (4 s) times out, and A
	// takes all four partitions. A reads B's partitions from B's commits:
	// the records B read past them it reads again (at least once), the
	// ones B committed it does not.
	mb.kill(t, ctx)
	before := len(ma.reads)
	var again int64
	for _, p := range bParts {
		again += perPart - bCommitted[p]
	}
	ma.until(t, ctx, "A taking B's partitions", func() bool {
		return len(ma.assigned) == membersParts && int64(len(ma.reads)-before) == again
	})
	require.Equal(t, wantReads(bParts, bCommitted, perPart), ma.readsOf(bParts), "A resumes B's partitions at B's commits")
	values := map[string]bool{}
	for _, m := range []*groupMember{ma, mb} {
		for _, r := range m.reads {
			values[r.value] = true
		}
	}
	require.Len(t, values, membersRecords, "no record lost: every one read by A or B")

	// A commits all, then stops; the group's positions are the ends.
	ma.until(t, ctx, "A's commits", func() bool {
		for _, p := range all {
			if ma.committed[p] != perPart {
				return false
			}
		}
		return true
	})
	ma.stop(t, ctx)
	require.Equal(t, []string{"0 10", "1 10", "2 10", "3 10"}, queryText(t, connect(t, a), fmt.Sprintf(
		"SELECT partition, committed_offset FROM sys.consumers WHERE topic = '%s' AND consumer = '%s' ORDER BY partition", topic, group)))

	// A restarted member reads exactly what came after the commits: were
	// it to start a partition before its commit, an older record of that
	// partition would come before the new ones.
	produceMembersRecords(t, a, topic, membersRecords, membersRecords+membersLater)
	mc := startMember(t, "C", member("C", -1))
	mc.until(t, ctx, "C's reads", func() bool { return len(mc.reads) == membersLater })
	require.Equal(t, wantReads(all, map[int32]int64{0: perPart, 1: perPart, 2: perPart, 3: perPart}, perPart+membersLater/membersParts),
		mc.readsOf(nil))
	mc.stop(t, ctx)
}

// memberEnv is a member process's environment.
func memberEnv(a *app, topic, group string, commits int) []string {
	return append(os.Environ(), "TOPICGATE_KAFKA="+a.KafkaAddr(), "TOPICGATE_TOPIC="+topic, "TOPICGATE_GROUP="+group,
		"TOPICGATE_COMMITS="+strconv.Itoa(commits), "PYTHONDONTWRITEBYTECODE=1", "LC_ALL=C.UTF-8")
}

// TestKafkaMembersConfluentPython: the scenario with librdkafka's group
// members (testdata/kafka/confluent_member.py, Debian's
// python3-confluent-kafka), its default assignors (range, then
// roundrobin).
func TestKafkaMembersConfluentPython(t *testing.T) {
	requireConfluent(t)
	a := startKafkaServer(t, nil)
	dir := kafkaScenarioDir(t)
	runMembersScenario(t, a, "pyevents", "pyworkers", func(_ string, commits int) *osexec.Cmd {
		cmd := osexec.Command(debianPython, "-E", "-s", "confluent_member.py")
		cmd.Dir, cmd.Env = dir, memberEnv(a, "pyevents", "pyworkers", commits)
		return cmd
	})
}

// TestKafkaMembersKafkajs: the scenario with kafkajs' group members
// (testdata/kafka/node/member.js), its default round-robin assignor.
func TestKafkaMembersKafkajs(t *testing.T) {
	node := requireKafkajs(t)
	a := startKafkaServer(t, nil)
	runMembersScenario(t, a, "jsevents", "jsworkers", func(_ string, commits int) *osexec.Cmd {
		cmd := osexec.Command(node, filepath.Join("node", "member.js"))
		cmd.Dir, cmd.Env = kafkaScenarioDir(t), memberEnv(a, "jsevents", "jsworkers", commits)
		return cmd
	})
}

// saramaMemberEnv makes the test binary, run with
// -test.run=^TestKafkaSaramaMemberProcess$, a sarama group member.
const saramaMemberEnv = "TOPICGATE_TEST_SARAMA_MEMBER"

// TestKafkaMembersSarama: the scenario with sarama's group members, each
// the test binary re-executed as TestKafkaSaramaMemberProcess; sarama's
// default range assignor.
func TestKafkaMembersSarama(t *testing.T) {
	a := startKafkaServer(t, nil)
	runMembersScenario(t, a, "smevents", "smworkers", func(_ string, commits int) *osexec.Cmd {
		cmd := osexec.Command(os.Args[0], "-test.run=^TestKafkaSaramaMemberProcess$")
		cmd.Env = append(memberEnv(a, "smevents", "smworkers", commits), saramaMemberEnv+"=1")
		return cmd
	})
}

// TestKafkaSaramaMemberProcess is the sarama member of
// TestKafkaMembersSarama when saramaMemberEnv is set (and skipped
// otherwise): it speaks confluent_member.py's line protocol on stdout
// and exits, never returning to the test framework.
func TestKafkaSaramaMemberProcess(t *testing.T) {
	if os.Getenv(saramaMemberEnv) == "" {
		t.Skip("the child process of TestKafkaMembersSarama")
	}
	if err := runSaramaMember(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// saramaMember is the handler of a sarama member: it prints its
// assignment, each record and each commit. Commits are synchronous
// (autocommit off, ConsumerGroupSession.Commit), one at a time.
type saramaMember struct {
	topic   string
	mu      sync.Mutex
	commits int // left to make; -1: no limit
	errs    <-chan error
}

func saramaSay(format string, args ...any) {
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

func (h *saramaMember) Setup(sess sarama.ConsumerGroupSession) error {
	parts := slices.Clone(sess.Claims()[h.topic])
	slices.Sort(parts)
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = strconv.Itoa(int(p))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	saramaSay("assigned %s", strings.Join(s, ","))
	return nil
}

func (*saramaMember) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaMember) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		saramaSay("read %d %d %s", m.Partition, m.Offset, m.Value)
		if h.commits != 0 {
			h.commits--
			sess.MarkMessage(m, "")
			sess.Commit()
			select {
			case err := <-h.errs:
				h.mu.Unlock()
				return fmt.Errorf("commit: %w", err)
			default:
			}
			saramaSay("committed %d %d", m.Partition, m.Offset+1)
		}
		h.mu.Unlock()
	}
	return nil
}

// runSaramaMember is the member: it consumes until its stdin closes,
// then closes the group (leaving it) and prints closed.
func runSaramaMember() error {
	commits, err := strconv.Atoi(os.Getenv("TOPICGATE_COMMITS"))
	if err != nil {
		return err
	}
	deadline := time.AfterFunc(2*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "timeout: still running after 2m")
		os.Exit(1)
	})
	defer deadline.Stop()
	cfg := sarama.NewConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Group.Session.Timeout = 4 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 300 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = 10 * time.Second
	cfg.Consumer.MaxWaitTime = 100 * time.Millisecond
	g, err := sarama.NewConsumerGroup([]string{os.Getenv("TOPICGATE_KAFKA")}, os.Getenv("TOPICGATE_GROUP"), cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	h := &saramaMember{topic: os.Getenv("TOPICGATE_TOPIC"), commits: commits, errs: g.Errors()}
	for ctx.Err() == nil {
		// Consume returns at each rebalance; the loop joins again.
		if err := g.Consume(ctx, []string{h.topic}, h); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
			return err
		}
	}
	if err := g.Close(); err != nil {
		return err
	}
	saramaSay("closed")
	return nil
}
