using Broker.TestKit;
using Broker.Abstractions;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Tests.Conf.ConfTestKit;

namespace Broker.Host.Tests.Conf;

// A configuration in the style of nats-server's documentation and test configs, read end to end.
public sealed class ConfRealisticFileTests : IDisposable
{
    private const string Main = """
        # NATS server configuration
        server_name: "hub-1"
        listen: 0.0.0.0:4222
        http: localhost:8222        # monitoring
        debug: false
        trace = off
        logtime: true
        log_file: "/var/log/nats/nats.log"
        max_payload: 1MB
        max_pending: 64MB
        max_connections: 64K
        max_control_line: 4KB
        ping_interval: "2m"
        write_deadline: "10s"
        lame_duck_duration: "30s"

        ADMIN_PASS: $2a$11$ooo
        TIMEOUT = 2.5

        include "limits.conf"

        authorization {
          timeout: $TIMEOUT
          users = [
            {user: admin, password: $ADMIN_PASS, permissions: {publish: ">", subscribe: ">"}}
            {
              user: "client"
              password: $CLIENT_PASS
              permissions: {
                publish: {allow: ["orders.>", "_INBOX.>"], deny: "orders.secret"}
                subscribe: ["events.*", "_INBOX.>"]
                allow_responses: true
              }
            }
          ]
        }

        cluster {
          name: hub
          listen: 0.0.0.0:6222
          routes = [
            nats-route://ruser:T0pS3cr3t@otherdockerhost:6222
            nats-route://127.0.0.1:6223
          ]
        }

        jetstream {
          store_dir: /data/jetstream
          max_memory_store: 1GB
          max_file_store: 10GiB
        }

        tls {
          cert_file: "./certs/server.pem"
          key_file:  './certs/key.pem'
          verify: true
          timeout: 2
        }
        """;

    private readonly TempDirectory dir = new("conf-tests-");

    public void Dispose() => dir.Dispose();

    private ConfMap Load()
    {
        dir.Write("limits.conf", "# shared limits\nmax_subscriptions: 1000\nmax_traced_msg_len = 512\n");
        var path = dir.Write("nats.conf", Main);
        return ConfParser.ParseFile(path, name => name == "CLIENT_PASS" ? "s3cr3t" : null);
    }

    [Fact]
    public void Top_level_options_have_their_types()
    {
        var conf = Load();
        Assert.Equal("hub-1", Str(conf, "server_name"));
        Assert.Equal("0.0.0.0:4222", Str(conf, "listen"));
        Assert.Equal("localhost:8222", Str(conf, "http"));
        Assert.False(Bool(conf, "debug"));
        Assert.False(Bool(conf, "trace"));
        Assert.True(Bool(conf, "logtime"));
        Assert.Equal("/var/log/nats/nats.log", Str(conf, "log_file"));
        Assert.Equal(1_048_576, Int(conf, "max_payload"));
        Assert.Equal(64L * 1024 * 1024, Int(conf, "max_pending"));
        Assert.Equal(64_000, Int(conf, "max_connections"));
        Assert.Equal(4096, Int(conf, "max_control_line"));
        Assert.True(ConfigSyntax.TryParseDuration(Str(conf, "ping_interval"), out var pingInterval, out _));
        Assert.Equal(TimeSpan.FromMinutes(2), pingInterval);
        Assert.True(ConfigSyntax.TryParseDuration(Str(conf, "write_deadline"), out var writeDeadline, out _));
        Assert.Equal(TimeSpan.FromSeconds(10), writeDeadline);
        Assert.Equal(1000, Int(conf, "max_subscriptions"));
        Assert.Equal(512, Int(conf, "max_traced_msg_len"));
    }

    [Fact]
    public void Authorization_users_and_permissions()
    {
        var auth = Map(Load(), "authorization");
        Assert.Equal(2.5, Float(auth, "timeout"));
        var users = Array(auth, "users").Items.Cast<ConfMap>().ToArray();
        Assert.Equal(2, users.Length);
        Assert.Equal("admin", Str(users[0], "user"));
        Assert.Equal("$2a$11$ooo", Str(users[0], "password"));
        Assert.Equal(">", Str(Map(users[0], "permissions"), "publish"));
        Assert.Equal("s3cr3t", Str(users[1], "password"));
        var permissions = Map(users[1], "permissions");
        Assert.Equal("{allow: [\"orders.>\", \"_INBOX.>\"], deny: \"orders.secret\"}", Render(Map(permissions, "publish")));
        Assert.Equal("[\"events.*\", \"_INBOX.>\"]", Render(Array(permissions, "subscribe")));
        Assert.True(Bool(permissions, "allow_responses"));
    }

    [Fact]
    public void Cluster_jetstream_and_tls_blocks()
    {
        var conf = Load();
        var cluster = Map(conf, "cluster");
        Assert.Equal("hub", Str(cluster, "name"));
        Assert.Equal(
            "[\"nats-route://ruser:T0pS3cr3t@otherdockerhost:6222\", \"nats-route://127.0.0.1:6223\"]",
            Render(Array(cluster, "routes")));
        var js = Map(conf, "jetstream");
        Assert.Equal("/data/jetstream", Str(js, "store_dir"));
        Assert.Equal(1L << 30, Int(js, "max_memory_store"));
        Assert.Equal(10L << 30, Int(js, "max_file_store"));
        var tls = Map(conf, "tls");
        Assert.Equal("./certs/server.pem", Str(tls, "cert_file"));
        Assert.Equal("./certs/key.pem", Str(tls, "key_file"));
        Assert.True(Bool(tls, "verify"));
        Assert.Equal(2, Int(tls, "timeout"));
    }

    [Fact]
    public void Variable_only_keys_and_positions_for_the_options_layer()
    {
        var conf = Load();
        var path = Path.Combine(dir.Path, "nats.conf");
        // Keys that served as $variables: the options layer skips them instead of "unknown field".
        Assert.Equal(["ADMIN_PASS", "TIMEOUT"], conf.Entries.Where(e => e.UsedAsVariable).Select(e => e.Key));
        Assert.True(conf.TryGetEntry("max_subscriptions", out var fromInclude));
        Assert.Equal(new ConfPosition(Path.Combine(dir.Path, "limits.conf"), 2, 1), fromInclude.KeyPosition);
        var auth = Map(conf, "authorization");
        Assert.Equal(new ConfPosition(path, 23, 12), Value(auth, "timeout").Position);
        var client = (ConfMap)Array(auth, "users").Items[1];
        Assert.Equal(new ConfPosition(path, 28, 17), Value(client, "password").Position);
        Assert.True(client.TryGetEntry("password", out var entry));
        Assert.Equal(new ConfPosition(path, 28, 7), entry.KeyPosition);
    }
}
