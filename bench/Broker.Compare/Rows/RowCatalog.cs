using Broker.Compare.Load;
using Broker.Compare.Load.C;
using Broker.Compare.Load.Client;

namespace Broker.Compare.Rows;

/// <summary>
/// The rows of the comparison, in table order. Adding a row is one entry here: a workload (the raw-socket load
/// generator's building blocks, or a new <see cref="IWorkload"/>) and, when the row needs more than a plain NATS
/// listener, the server configuration both servers run with.
/// </summary>
internal static class RowCatalog
{
    /// <summary>
    /// Every row; each core server row the lean generator drives has a NATS.Client.Core twin right after it, and each over
    /// bare TCP a C (libnats) twin after that.
    /// </summary>
    public static IReadOnlyList<Row> All { get; } =
    [
        new() { Id = "loopback", Title = "Physical limit: loopback TCP, 16 KB writes", PayloadSize = LoopbackWorkload.BlockSize, Target = RowTarget.Machine, Workload = () => new LoopbackWorkload(), Unit = "16 KB writes" },
        .. Triplets(new() { Id = "pub-16", Title = "Publish only, 16 B", PayloadSize = 16, Workload = () => new PubSubWorkload(16, publishers: 1, subscribers: 0), Unit = "messages published" }, () => new CorePubSubWorkload(16, publishers: 1, subscribers: 0), () => new CPubSubWorkload(16, publishers: 1, subscribers: 0)),
        .. Triplets(new() { Id = "pub-128", Title = "Publish only, 128 B", PayloadSize = 128, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 0), Unit = "messages published" }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 0), () => new CPubSubWorkload(128, publishers: 1, subscribers: 0)),
        .. Triplets(new() { Id = "pubsub-16", Title = "Pub/sub 1:1, 16 B", PayloadSize = 16, Workload = () => new PubSubWorkload(16, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(16, publishers: 1, subscribers: 1), () => new CPubSubWorkload(16, publishers: 1, subscribers: 1)),
        .. Triplets(new() { Id = "pubsub-16k", Title = "Pub/sub 1:1, 16 KB", PayloadSize = 16 * 1024, Workload = () => new PubSubWorkload(16 * 1024, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(16 * 1024, publishers: 1, subscribers: 1), () => new CPubSubWorkload(16 * 1024, publishers: 1, subscribers: 1)),
        .. Triplets(new() { Id = "fanout-1x4-128", Title = "Fan-out 1 pub : 4 subs, 128 B", PayloadSize = 128, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 4) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 4), () => new CPubSubWorkload(128, publishers: 1, subscribers: 4)),
        .. Triplets(new() { Id = "pubsub-4x4-128", Title = "4 pubs x 4 subs, 128 B", PayloadSize = 128, Workload = () => new PubSubWorkload(128, publishers: 4, subscribers: 4) }, () => new CorePubSubWorkload(128, publishers: 4, subscribers: 4), () => new CPubSubWorkload(128, publishers: 4, subscribers: 4)),
        .. Triplets(new() { Id = "leaf-spoke2hub-128", Title = "Leaf node link: pub on the spoke, sub on the hub, 128 B", PayloadSize = 128, Link = ServerLink.SpokeToHub, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 1), () => new CPubSubWorkload(128, publishers: 1, subscribers: 1)),
        .. Triplets(new() { Id = "leaf-hub2spoke-128", Title = "Leaf node link: pub on the hub, sub on the spoke, 128 B", PayloadSize = 128, Link = ServerLink.HubToSpoke, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 1), () => new CPubSubWorkload(128, publishers: 1, subscribers: 1)),
        .. Triplets(new() { Id = "route-pubsub-128", Title = "Route: pub on one cluster member, sub on the other, 128 B", PayloadSize = 128, Link = ServerLink.Route, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 1), () => new CPubSubWorkload(128, publishers: 1, subscribers: 1)),
        .. Triplets(new() { Id = "reqrep-1-128", Title = "Request/reply, 1 client : 1 service, 128 B", PayloadSize = 128, Workload = () => new RequestReplyWorkload(128, clients: 1, services: 1, queueGroup: false), Unit = "round trips" }, () => new CoreRequestReplyWorkload(128, clients: 1, services: 1, queueGroup: false), () => new CRequestReplyWorkload(128, clients: 1, services: 1, queueGroup: false)),
        .. Triplets(new() { Id = "reqrep-10q2-16", Title = "Request/reply, 10 clients : 2 queue services, 16 B", PayloadSize = 16, Workload = () => new RequestReplyWorkload(16, clients: 10, services: 2, queueGroup: true), Unit = "round trips" }, () => new CoreRequestReplyWorkload(16, clients: 10, services: 2, queueGroup: true), () => new CRequestReplyWorkload(16, clients: 10, services: 2, queueGroup: true)),
        new() { Id = "streamimport-pubsub-128", Title = "Stream import: pub in account E, sub in account I (prefix), 128 B", PayloadSize = 128, ServerConfig = StreamImportConfig, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1, subscriberUser: "i", subscriberPrefix: "imp.") },
        new() { Id = "svcimport-reqrep-128", Title = "Service import: requester in account B, responder in account A (svc.>), 128 B", PayloadSize = 128, ServerConfig = ServiceImportConfig, Workload = () => new RequestReplyWorkload(128, clients: 1, services: 1, queueGroup: false, serviceUser: "a", servicePrefix: "svc."), Unit = "round trips" },
        new() { Id = "js-pub-sync-16", Title = "JetStream: synchronous publish, 16 B, memory stream", PayloadSize = 16, ServerConfig = JetStreamConfig, Workload = () => new JetStreamPublishWorkload(16, window: 1), Unit = "messages acknowledged" },
        new() { Id = "js-pub-async-128", Title = "JetStream: async publish (window 1,000), 128 B, memory stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamPublishWorkload(128, window: 1000), Unit = "messages acknowledged" },
        new() { Id = "js-ordered-128", Title = "JetStream: ordered consumer, 128 B, memory stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamConsumeWorkload(128, ConsumeMode.Ordered) },
        new() { Id = "js-fetch-ack-128", Title = "JetStream: durable pull fetch 100 + explicit acks, 128 B, memory stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamConsumeWorkload(128, ConsumeMode.FetchAck), Unit = "messages received and acknowledged" },
        new() { Id = "js-mirror-catchup-128", Title = "JetStream: a mirror catching up with a filled memory stream, 128 B", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new StreamCopyWorkload(128, StreamCopyMode.MirrorCatchUp), Unit = "messages mirrored" },
        new() { Id = "js-source-follow-128", Title = "JetStream: a source following an async publisher (window 1,000), 128 B, memory streams", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new StreamCopyWorkload(128, StreamCopyMode.SourceFollow), Unit = "messages sourced" },
        new() { Id = "js-file-pub-async-128", Title = "JetStream: async publish (window 1,000), 128 B, file stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamPublishWorkload(128, window: 1000, storage: "file"), Unit = "messages acknowledged" },
        new() { Id = "js-file-pub-async100-128", Title = "JetStream: async publish (window 100), 128 B, file stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamPublishWorkload(128, window: 100, storage: "file"), Unit = "messages acknowledged" },
        new() { Id = "js-file-pub-async100-128-si2m", Title = "JetStream: async publish (window 100), 128 B, file stream, ours with jetstream { sync_interval: \"2m\" } (nats-server's default; 2.9.10 refuses the key)", PayloadSize = 128, ServerConfig = JetStreamConfig, OursServerConfig = JetStreamSyncInterval2mConfig, Workload = () => new JetStreamPublishWorkload(128, window: 100, storage: "file"), Unit = "messages acknowledged" },
        new() { Id = "js-file-pub-sync-128", Title = "JetStream: synchronous publish, 128 B, file stream", PayloadSize = 128, ServerConfig = JetStreamConfig, Workload = () => new JetStreamPublishWorkload(128, window: 1, storage: "file"), Unit = "messages acknowledged" },
        new() { Id = "js-file-pub-sync-128-si2m", Title = "JetStream: synchronous publish, 128 B, file stream, ours with jetstream { sync_interval: \"2m\" } (nats-server's default; 2.9.10 refuses the key)", PayloadSize = 128, ServerConfig = JetStreamConfig, OursServerConfig = JetStreamSyncInterval2mConfig, Workload = () => new JetStreamPublishWorkload(128, window: 1, storage: "file"), Unit = "messages acknowledged" },
        new() { Id = "js-file-ordered-128", Title = "JetStream: ordered consumer, 128 B, file stream of 500,000", PayloadSize = 128, ServerConfig = JetStreamConfig, FixedCount = FileStreamMessages, Workload = () => new JetStreamConsumeWorkload(128, ConsumeMode.Ordered, storage: "file") },
        new() { Id = "js-file-fetch-ack-128", Title = "JetStream: durable pull fetch 100 + explicit acks, 128 B, file stream of 500,000", PayloadSize = 128, ServerConfig = JetStreamConfig, FixedCount = FileStreamMessages, Workload = () => new JetStreamConsumeWorkload(128, ConsumeMode.FetchAck, storage: "file"), Unit = "messages received and acknowledged" },
        new() { Id = "js-file-restart", Title = "JetStream: restart with a 1 KiB-message file stream (default 1,000,000: 1 GB)", PayloadSize = StreamRestartWorkload.PayloadSize, Target = RowTarget.Restart, Workload = () => new StreamRestartWorkload(), Unit = "messages recovered per second of restart (process start until STREAM.INFO shows them all)" },
        new() { Id = "mqtt", Title = "MQTT publish/subscribe", NotAvailable = "measured by the mqtt command (Broker.Compare mqtt) against nats-server and Mosquitto" },
        .. Twins(new() { Id = "tls-pubsub-128", Title = "TLS: pub/sub 1:1, 128 B", PayloadSize = 128, Transport = NatsTransport.Tls, ServerConfig = TlsConfig, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 1)),
        .. Twins(new() { Id = "tls-pub-128", Title = "TLS: publish only, 128 B", PayloadSize = 128, Transport = NatsTransport.Tls, ServerConfig = TlsConfig, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 0), Unit = "messages published" }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 0)),
        .. Twins(new() { Id = "ws-pubsub-128", Title = "WebSocket: pub/sub 1:1, 128 B", PayloadSize = 128, Transport = NatsTransport.WebSocket, ServerConfig = WebSocketConfig, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 1) }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 1)),
        .. Twins(new() { Id = "ws-pub-128", Title = "WebSocket: publish only, 128 B", PayloadSize = 128, Transport = NatsTransport.WebSocket, ServerConfig = WebSocketConfig, Workload = () => new PubSubWorkload(128, publishers: 1, subscribers: 0), Unit = "messages published" }, () => new CorePubSubWorkload(128, publishers: 1, subscribers: 0)),
    ];

    /// <summary>The file stream the file consumer rows read (issue 11): the same 500,000 messages on both servers.</summary>
    public const long FileStreamMessages = 500_000;

    /// <summary>A lean row and its twin driven by NATS.Client.Core (same server configuration and transport).</summary>
    private static Row[] Twins(Row lean, Func<IWorkload> clientCore) =>
    [
        lean,
        lean with
        {
            Id = lean.Id + Row.ClientCoreSuffix,
            Title = lean.Title + " (NATS.Client.Core)",
            Generator = Generator.ClientCore,
            Workload = clientCore,
        },
    ];

    /// <summary>A lean row with its NATS.Client.Core twin and its C (libnats) twin.</summary>
    private static Row[] Triplets(Row lean, Func<IWorkload> clientCore, Func<IWorkload> c) =>
    [
        .. Twins(lean, clientCore),
        lean with
        {
            Id = lean.Id + Row.CSuffix,
            Title = lean.Title + " (C client)",
            Generator = Generator.C,
            Workload = c,
        },
    ];

    // Anonymous connections (the publishers, the readiness probe) are in E; the subscribers log in to I, which imports
    // everything E publishes under the prefix imp.
    private const string StreamImportConfig = """
        accounts {
          E: { users: [ { user: e, password: e } ], exports: [ { stream: ">" } ] }
          I: { users: [ { user: i, password: i } ], imports: [ { stream: { account: E, subject: ">" }, prefix: imp } ] }
        }
        no_auth_user: e
        """;

    // Anonymous connections (the requesters, the readiness probe) are in B, which imports the service svc.> that A
    // exports; the responders log in to A. Each request gets a reply subject of A's (_R_...) that routes the answer
    // back to the requester's inbox in B.
    private const string ServiceImportConfig = """
        accounts {
          A: { users: [ { user: a, password: a } ], exports: [ { service: "svc.>" } ] }
          B: { users: [ { user: b, password: b } ], imports: [ { service: { account: A, subject: "svc.>" } } ] }
        }
        no_auth_user: b
        """;

    /// <summary>
    /// JetStream on, its files under a folder of each server process's own, each server with its own durability default
    /// (nats-server: fsync every 2 minutes; ours: fsync before each acknowledgement, docs/durability.md).
    /// </summary>
    private const string JetStreamConfig = """
        jetstream {
          store_dir: "{store_dir}"
          max_memory_store: 8GB
        }
        """;

    /// <summary>
    /// <see cref="JetStreamConfig"/> with nats-server's durability policy (fsync every 2 minutes, acknowledged once
    /// written to the operating system) for our server, whose default fsyncs before each acknowledgement. Our server
    /// alone runs it: nats-server 2.9.10 refuses <c>sync_interval</c> (2.10 added it, in <c>jetstream { }</c>) and
    /// always behaves as 2m; ours hands it from the jetstream block to the file store (docs/durability.md). Quoted, as
    /// nats-server's durations are: an unquoted <c>2m</c> is the number 2,000,000 (seconds).
    /// </summary>
    private const string JetStreamSyncInterval2mConfig = """
        jetstream {
          store_dir: "{store_dir}"
          max_memory_store: 8GB
          sync_interval: "2m"
        }
        """;

    /// <summary>The NATS port TLS-only with the run's certificate: INFO in clear text, then the client's handshake.</summary>
    private const string TlsConfig = """
        tls {
          cert_file: "{cert_file}"
          key_file: "{key_file}"
        }
        """;

    /// <summary>
    /// A clear-text WebSocket listener on loopback beside the NATS port (nats-server accepts <c>no_tls</c> only
    /// without a <c>tls</c> block, and refuses a WebSocket port without either).
    /// </summary>
    private const string WebSocketConfig = """
        websocket {
          host: "127.0.0.1"
          port: {ws_port}
          no_tls: true
        }
        """;
}
