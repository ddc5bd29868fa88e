package natsnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// ErrNoLeader is returned (wrapped) by MetaLeader and StreamLeader while no
// running node knows a leader, e.g. during an election or without a quorum.
var ErrNoLeader = errors.New("no leader")

func readSmall(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return string(b)
}

// jsz is the part of nats-server's /jsz answer that the harness reads.
type jsz struct {
	Meta *struct {
		Leader   string `json:"leader"`
		Size     int    `json:"cluster_size"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
		} `json:"replicas"`
	} `json:"meta_cluster"`
	Accounts []struct {
		Name    string `json:"name"`
		Streams []struct {
			Name    string `json:"name"`
			Cluster *struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

func (c *Cluster) jsz(ctx context.Context, n *Node, query url.Values) (*jsz, error) {
	u := fmt.Sprintf("http://%s/jsz?%s", hostPort(n.MonitorPort), query.Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var j jsz
	if err := json.NewDecoder(resp.Body).Decode(&j); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return &j, nil
}

func (c *Cluster) byName(name string) *Node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// leaderFrom asks the running nodes in turn and returns the index of the
// first leader name one of them reports that is a running node.
func (c *Cluster) leaderFrom(ctx context.Context, what string, query url.Values, pick func(*jsz) string) (int, error) {
	var errs []error
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		j, err := c.jsz(ctx, n, query)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		name := pick(j)
		if name == "" {
			continue
		}
		m := c.byName(name)
		if m == nil {
			return -1, fmt.Errorf("natsnode: %s leader %q is no node of this cluster", what, name)
		}
		if m.Running() { // a killed leader is reported until its followers time out
			return m.Index, nil
		}
		errs = append(errs, fmt.Errorf("node %d still names killed node %d", n.Index, m.Index))
	}
	return -1, fmt.Errorf("natsnode: %s: %w", what, errors.Join(append([]error{ErrNoLeader}, errs...)...))
}

// MetaLeader returns the index of the node leading the JetStream meta group
// (the one that places streams and consumers), as the running nodes' /jsz
// reports it.
func (c *Cluster) MetaLeader(ctx context.Context) (int, error) {
	return c.leaderFrom(ctx, "JetStream meta", url.Values{}, func(j *jsz) string {
		if j.Meta == nil {
			return ""
		}
		return j.Meta.Leader
	})
}

// StreamLeader returns the index of the node leading stream's RAFT group, as
// the running nodes that hold a replica of it report it.
func (c *Cluster) StreamLeader(ctx context.Context, stream string) (int, error) {
	q := url.Values{"accounts": {"true"}, "streams": {"true"}}
	return c.leaderFrom(ctx, "stream "+stream, q, func(j *jsz) string {
		for _, a := range j.Accounts {
			for _, s := range a.Streams {
				if s.Name == stream && s.Cluster != nil {
					return s.Cluster.Leader
				}
			}
		}
		return ""
	})
}

// metaFormed reports whether the JetStream meta group spans all nodes: every
// running node knows a running leader and a group of N() peers, and the
// leader sees every other running node as current. /healthz alone is not
// enough: a node answers 200 as soon as it follows a leader, while it may
// still believe the group has two peers, and a leader killed then leaves no
// quorum behind.
func (c *Cluster) metaFormed(ctx context.Context) error {
	leader := ""
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		j, err := c.jsz(ctx, n, url.Values{})
		if err != nil {
			return err
		}
		switch {
		case j.Meta == nil || j.Meta.Leader == "":
			return fmt.Errorf("node %d knows no meta leader", n.Index)
		case j.Meta.Size != len(c.nodes):
			return fmt.Errorf("node %d sees a meta group of %d, not %d", n.Index, j.Meta.Size, len(c.nodes))
		case leader != "" && j.Meta.Leader != leader:
			return fmt.Errorf("nodes disagree on the meta leader (%s, %s)", leader, j.Meta.Leader)
		}
		leader = j.Meta.Leader
		if n.Name != leader {
			continue
		}
		current := map[string]bool{}
		for _, r := range j.Meta.Replicas {
			current[r.Name] = r.Current
		}
		for _, o := range c.nodes {
			if o != n && o.Running() && !current[o.Name] {
				return fmt.Errorf("meta leader %d does not see node %d as current", n.Index, o.Index)
			}
		}
	}
	if m := c.byName(leader); m == nil || !m.Running() {
		return fmt.Errorf("meta leader %q is not running", leader)
	}
	return nil
}
