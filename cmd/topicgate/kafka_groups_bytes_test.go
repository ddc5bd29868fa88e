package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// roundTrip sends req at version v and decodes its answer into resp.
func (r *rawKafka) roundTrip(req kmsg.Request, v int16, corr int32, resp kmsg.Response) {
	r.t.Helper()
	r.send(request(req, v, corr))
	got, body := r.response()
	require.Equal(r.t, corr, got)
	resp.SetVersion(v)
	require.NoError(r.t, resp.ReadFrom(body))
}

// TestKafkaGroupKeepsRequestBytes: the bytes a group keeps past the
// request that carried them (a member's protocol metadata from its
// JoinGroup, the assignments from the leader's SyncGroup) are its own,
// not the connection's frame buffer, which the next request is read
// into: a member that syncs again in a Stable group (as a follower that
// syncs after the leader does) gets the assignment the leader sent, and
// DescribeGroups shows the metadata the member joined with.
func TestKafkaGroupKeepsRequestBytes(t *testing.T) {
	a := startKafkaServer(t, nil)
	r := dialKafka(t, a)
	meta, assign := bytes.Repeat([]byte{0xA1}, 256), bytes.Repeat([]byte{0x0A}, 48)
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = "bytes", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 30_000, 30_000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
	joined := kmsg.NewPtrJoinGroupResponse()
	r.roundTrip(join, 3, 1, joined)
	require.Zero(t, joined.ErrorCode)
	require.Equal(t, joined.MemberID, joined.LeaderID)

	sync := func(assignments []kmsg.SyncGroupRequestGroupAssignment, corr int32) []byte {
		req := kmsg.NewPtrSyncGroupRequest()
		req.Group, req.MemberID, req.Generation, req.GroupAssignment = "bytes", joined.MemberID, joined.Generation, assignments
		resp := kmsg.NewPtrSyncGroupResponse()
		r.roundTrip(req, 1, corr, resp)
		require.Zero(t, resp.ErrorCode)
		return resp.MemberAssignment
	}
	require.Equal(t, assign, sync([]kmsg.SyncGroupRequestGroupAssignment{{MemberID: joined.MemberID, MemberAssignment: assign}}, 2))
	// A request of other bytes, shorter than the JoinGroup (so read into
	// the same buffer).
	clobber := kmsg.NewPtrMetadataRequest()
	for range 6 {
		name := string(bytes.Repeat([]byte{'z'}, 40))
		clobber.Topics = append(clobber.Topics, kmsg.MetadataRequestTopic{Topic: &name})
	}
	r.roundTrip(clobber, 1, 3, kmsg.NewPtrMetadataResponse())
	require.Equal(t, assign, sync(nil, 4), "the assignment the leader sent")

	desc := kmsg.NewPtrDescribeGroupsRequest()
	desc.Groups = []string{"bytes"}
	described := kmsg.NewPtrDescribeGroupsResponse()
	r.roundTrip(desc, 0, 5, described)
	require.Len(t, described.Groups, 1)
	require.Len(t, described.Groups[0].Members, 1)
	require.Equal(t, meta, described.Groups[0].Members[0].ProtocolMetadata)
	require.Equal(t, assign, described.Groups[0].Members[0].MemberAssignment)
}
