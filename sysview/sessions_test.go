package sysview

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"topicgate/sql/pgerror"
	"topicgate/topicstore"
)

// gatherStore is a store several gateways share, as FindSession sees it:
// this gateway answers itself, the gateways in slow did not answer the
// Gather within its second, and asked alone each answers from its own
// sessions, or fails as a gateway that is gone does.
type gatherStore struct {
	topicstore.Store // not called
	self             string
	slow             map[string][]SessionView // nil: does not answer an Ask
	asked            []string
}

func (g *gatherStore) Serve(string, func() []byte) error                         { return nil }
func (g *gatherStore) Tell(string, []byte) error                                 { return nil }
func (g *gatherStore) Hear(string, func([]byte)) error                           { return nil }
func (g *gatherStore) Answer(string, func(context.Context, []byte) []byte) error { return nil }

func (g *gatherStore) Gather(context.Context, string) (topicstore.Gathered, error) {
	out := topicstore.Gathered{Answers: []topicstore.GatewayAnswer{{Gateway: g.self, Data: []byte("[]")}}}
	for gw := range g.slow {
		out.Missing = append(out.Missing, gw)
	}
	return out, nil
}

func (g *gatherStore) Ask(ctx context.Context, gw, kind string, data []byte) ([]byte, error) {
	g.asked = append(g.asked, gw)
	if kind != askSession {
		return nil, errors.New("unexpected kind " + kind)
	}
	if _, ok := ctx.Deadline(); !ok {
		return nil, errors.New("an Ask without a deadline")
	}
	ss := g.slow[gw]
	if ss == nil {
		return nil, topicstore.ErrUnavailable
	}
	pid, _ := strconv.ParseInt(string(data), 10, 64)
	for _, sv := range ss {
		if sv.PID == pid {
			return []byte(`{"pid":` + strconv.FormatInt(sv.PID, 10) + `,"user":"` + sv.User + `"}`), nil
		}
	}
	return []byte("null"), nil
}

type noLocal struct{}

func (noLocal) Sessions() []SessionView             { return nil }
func (noLocal) Holder(string, string, int32) uint32 { return 0 }

// TestFindSessionAsksTheSilent: a session held by a gateway that missed
// the Gather's second is found by asking that gateway alone; a pid no
// gateway has is not found; and while a gateway answers neither, whether
// it holds the pid is not known (57P03), not "no such process".
func TestFindSessionAsksTheSilent(t *testing.T) {
	st := &gatherStore{self: "a", slow: map[string][]SessionView{"b": {{PID: 42, User: "alice"}}}}
	v := New(st, time.Now, noLocal{})

	sv, gw, found, err := v.FindSession(42)
	if err != nil || !found || gw != "b" || sv.User != "alice" {
		t.Fatalf("FindSession(42) = %+v, %q, %v, %v; want alice's session on b", sv, gw, found, err)
	}
	if _, _, found, err = v.FindSession(7); err != nil || found {
		t.Fatalf("FindSession(7) = %v, %v; want not found, no error", found, err)
	}

	st.slow["c"] = nil // alive by its heartbeat, answers nothing
	if _, _, found, err = v.FindSession(7); found || pgerror.Code(err) != pgerror.CodeCannotConnectNow {
		t.Fatalf("FindSession(7) with c silent = %v, %v; want error 57P03", found, err)
	}
	if _, _, found, err = v.FindSession(42); err != nil || !found {
		t.Fatalf("FindSession(42) with c silent = %v, %v; want found on b", found, err)
	}

	// Every gateway answered: nothing is asked alone.
	st.slow, st.asked = nil, nil
	if _, _, found, err = v.FindSession(42); err != nil || found || len(st.asked) != 0 {
		t.Fatalf("FindSession(42), all answered = %v, %v, asked %v; want not found, none asked", found, err, st.asked)
	}
}
