using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// <c>cluster { }</c>: the keys it becomes and the options they bind to (TLS, permissions and advertise included); what
/// routes do not offer is an error.
/// The texts nats-server gives for malformed values are compared in <see cref="ReferenceConfErrorTests"/>.
/// </summary>
public sealed class ClusterConfTests
{
    [Fact]
    public void The_block_binds_to_cluster_options()
    {
        var mapping = ConfMappingTests.Map(
            "cluster {\n  name: c1\n  listen: \"127.0.0.1:6222\"\n  routes: [\"nats-route://a:1\", \"nats-route://u:p@b:2\"]\n" +
            "  authorization { user: r, password: s3cret, timeout: 3 }\n  no_advertise: true\n  connect_retries: 5\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Empty(mapping.Diagnostics);
        var cluster = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.Cluster;
        Assert.Equal(("c1", "127.0.0.1", 6222), (cluster.Name, cluster.Host, cluster.Port));
        Assert.Equal(["nats-route://a:1", "nats-route://u:p@b:2"], cluster.Routes);
        Assert.Equal(("r", "s3cret", TimeSpan.FromSeconds(3)), (cluster.Username, cluster.Password, cluster.AuthTimeout));
        Assert.True(cluster.NoAdvertise);
        Assert.Equal(5, cluster.ConnectRetries);
    }

    [Fact]
    public void Host_and_port_may_be_given_apart()
    {
        var mapping = ConfMappingTests.Map("cluster { host: 127.0.0.1, port: -1 }");

        Assert.Empty(mapping.Diagnostics);
        var cluster = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.Cluster;
        Assert.Equal(("127.0.0.1", -1, true), (cluster.Host, cluster.Port, cluster.IsEnabled));
    }

    [Fact]
    public void Tls_permissions_and_advertise_bind_to_cluster_options()
    {
        var mapping = ConfMappingTests.Map(
            "cluster {\n  port: 6222\n  tls { cert_file: c.pem, key_file: k.pem, ca_file: ca.pem, verify: true, insecure: true, timeout: 3 }\n" +
            "  permissions { import: \"a.>\", export: { allow: [\"b.>\"], deny: \"b.c\" } }\n  advertise: \"example.com:4244\"\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        var cluster = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.Cluster;
        Assert.Equal(("c.pem", "k.pem", "ca.pem", true, TimeSpan.FromSeconds(3)), (cluster.Tls!.CertFile, cluster.Tls.KeyFile, cluster.Tls.CaFile, cluster.Tls.Insecure, cluster.Tls.Timeout));
        Assert.Equal(["a.>"], cluster.Permissions!.Publish!.Allow);
        Assert.Equal(["b.>"], cluster.Permissions.Subscribe!.Allow);
        Assert.Equal(["b.c"], cluster.Permissions.Subscribe.Deny);
        Assert.Equal("example.com:4244", cluster.Advertise);
    }

    [Theory]
    [InlineData("tls { cert_file: c.pem }", "missing 'key_file' in TLS configuration")]
    [InlineData("tls { verify_and_map: true }", "\"verify_and_map\": not supported yet (routes authenticated by their certificate)")]
    [InlineData("tls { pinned_certs: [] }", "\"pinned_certs\": not supported yet (on routes' TLS)")]
    [InlineData("permissions { import: \"a\", allow_responses: true }", "Cluster permissions do not support dynamic responses")]
    [InlineData("permissions { responses: true }", "Unknown field \"responses\" parsing permissions")]
    [InlineData("advertise: 42", "interface conversion: interface {} is int64, not string")]
    [InlineData("authorization { user: a, password: b, permissions { import: \"a\" } }", "\"permissions\": not supported yet (route permissions)")]
    public void What_routes_do_not_offer_is_an_error(string item, string error)
    {
        var mapping = ConfMappingTests.Map($"cluster {{\n  port: 6222\n  {item}\n}}");
        if (!mapping.HasErrors)
        {
            // GenTLSConfig's checks are the options' own, made when the settings are bound.
            var configuration = new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build();
            Assert.EndsWith(error, Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(configuration)).Message, StringComparison.Ordinal);
            return;
        }

        Assert.Contains(mapping.Diagnostics, d => d.Message.StartsWith(error, StringComparison.Ordinal));
    }

    [Fact]
    public void A_route_url_that_does_not_parse_is_nats_servers_error_and_a_repeated_one_a_warning()
    {
        var mapping = ConfMappingTests.Map("cluster {\n  port: 6222\n  routes: [\"::bad url\", \"nats://a:1\", \"nats://a:1\"]\n}");

        Assert.Contains(mapping.Diagnostics, d => d.Message == "error parsing route url [\"::bad url\"]");
        Assert.Contains(mapping.Diagnostics, d => d.Message == "Duplicate route entry detected");
    }

    [Fact]
    public void Routes_without_a_cluster_port_are_refused_at_start_as_in_nats_server()
    {
        var options = new Broker.Core.BrokerOptions();
        options.Cluster.Routes.Add("nats-route://a:1");

        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal("solicited routes require cluster capabilities, e.g. --cluster", error.Message);
    }
}
