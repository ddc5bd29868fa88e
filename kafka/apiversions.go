package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// API keys this door answers.
const (
	produceKey          int16 = 0
	fetchKey            int16 = 1
	listOffsetsKey      int16 = 2
	metadataKey         int16 = 3
	offsetCommitKey     int16 = 8
	offsetFetchKey      int16 = 9
	findCoordinatorKey  int16 = 10
	joinGroupKey        int16 = 11
	heartbeatKey        int16 = 12
	leaveGroupKey       int16 = 13
	syncGroupKey        int16 = 14
	describeGroupsKey   int16 = 15
	listGroupsKey       int16 = 16
	apiVersionsKey      int16 = 18
	initProducerIDKey   int16 = 22
	addPartitionsTxnKey int16 = 24
	addOffsetsTxnKey    int16 = 25
	endTxnKey           int16 = 26
	txnOffsetCommitKey  int16 = 28
	createTopicsKey     int16 = 19
	deleteTopicsKey     int16 = 20
	describeConfigsKey  int16 = 32
	createPartitionsKey int16 = 37
	deleteGroupsKey     int16 = 42
	offsetDeleteKey     int16 = 47
	describeClusterKey  int16 = 60

	saslHandshakeKey    int16 = 17
	saslAuthenticateKey int16 = 36
)

// Supported lists the APIs this door implements and their version ranges,
// which ApiVersions advertises exactly. The ranges stop where a version
// needs what the door does not have yet: Produce and Fetch from v3/v4
// (record batches v2 only) to before topic IDs (Produce v13, Fetch v13);
// Metadata up to v12 (topic IDs are answered as zero); ListOffsets from
// v1 to v6 (v7's max-timestamp lookup is not implemented); InitProducerId
// up to v4 (v5's two-phase commit is not); the transaction APIs
// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit) up to v3,
// before KIP-890's server-side verification versions. The
// classic group APIs stop before KIP-848's versions (OffsetCommit v9,
// OffsetFetch v9, ListGroups v5) and OffsetCommit and OffsetFetch start
// at v1 (v0 is ZooKeeper's). The admin APIs (admin*.go, and the group
// ones DeleteGroups and OffsetDelete) go to kmsg's newest versions;
// DeleteTopics v6 names topics by id, which the door answers
// UNKNOWN_TOPIC_ID (ids are zero).
var Supported = []kmsg.ApiVersionsResponseApiKey{
	{ApiKey: produceKey, MinVersion: 3, MaxVersion: 9},
	{ApiKey: fetchKey, MinVersion: 4, MaxVersion: 12},
	{ApiKey: listOffsetsKey, MinVersion: 1, MaxVersion: 6},
	{ApiKey: metadataKey, MinVersion: 0, MaxVersion: 12},
	{ApiKey: offsetCommitKey, MinVersion: 1, MaxVersion: 8},
	{ApiKey: offsetFetchKey, MinVersion: 1, MaxVersion: 8},
	{ApiKey: findCoordinatorKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: joinGroupKey, MinVersion: 0, MaxVersion: 9},
	{ApiKey: heartbeatKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: leaveGroupKey, MinVersion: 0, MaxVersion: 5},
	{ApiKey: syncGroupKey, MinVersion: 0, MaxVersion: 5},
	{ApiKey: describeGroupsKey, MinVersion: 0, MaxVersion: 5},
	{ApiKey: listGroupsKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: deleteGroupsKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: offsetDeleteKey, MinVersion: 0, MaxVersion: 0},
	{ApiKey: apiVersionsKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: initProducerIDKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: addPartitionsTxnKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: addOffsetsTxnKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: endTxnKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: txnOffsetCommitKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: createTopicsKey, MinVersion: 0, MaxVersion: 7},
	{ApiKey: deleteTopicsKey, MinVersion: 0, MaxVersion: 6},
	{ApiKey: describeConfigsKey, MinVersion: 0, MaxVersion: 4},
	{ApiKey: createPartitionsKey, MinVersion: 0, MaxVersion: 3},
	{ApiKey: describeClusterKey, MinVersion: 0, MaxVersion: 2},
	{ApiKey: saslHandshakeKey, MinVersion: 0, MaxVersion: 1},
	{ApiKey: saslAuthenticateKey, MinVersion: 0, MaxVersion: 2},
}

// supported reports whether version of key is in Supported.
func supported(key, version int16) bool {
	for _, k := range Supported {
		if k.ApiKey == key {
			return version >= k.MinVersion && version <= k.MaxVersion
		}
	}
	return false
}

// apiVersions answers ApiVersions with Supported.
func apiVersions(req *kmsg.ApiVersionsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	resp.ApiKeys = append([]kmsg.ApiVersionsResponseApiKey(nil), Supported...)
	return resp
}

// unsupportedApiVersions is Kafka's answer to an ApiVersions request of
// a version it does not know: UNSUPPORTED_VERSION and the supported list,
// in a v0 response (which every client can read), so the client retries
// with a version it finds there.
func unsupportedApiVersions() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = append([]kmsg.ApiVersionsResponseApiKey(nil), Supported...)
	return resp
}
