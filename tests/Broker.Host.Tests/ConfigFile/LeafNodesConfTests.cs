using Broker.Host.Configuration;
using Broker.Host.Configuration.ConfigFile;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// <c>leafnodes { remotes, reconnect, listen, authorization, advertise }</c>: the keys they become and the options they
/// bind to; a remote's <c>tls</c> block and WebSocket URLs bind, while TLS on the listener, <c>hub: true</c>, WebSocket
/// no masking and the TLS keys a spoke does not honour are errors, <c>min_version</c> a notice. The texts nats-server
/// gives for malformed values are compared in <see cref="ReferenceConfErrorTests"/>.
/// </summary>
public sealed class LeafNodesConfTests
{
    [Fact]
    public void Remotes_bind_to_leaf_node_options()
    {
        var mapping = ConfMappingTests.Map(
            "accounts { A: {} }\n" +
            "leafnodes {\n  reconnect: 3\n  remotes: [\n" +
            "    { url: \"nats-leaf://u:p@127.0.0.1:7422\", account: A, deny_imports: [\"a.>\"], deny_exports: \"b\" }\n" +
            "    { urls: [\"nats://h1:1\", \"nats://h2:2\"], no_randomize: true, credentials: \"/tmp/x.creds\" }\n  ]\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Empty(mapping.Diagnostics);
        var settings = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build());
        var leaf = settings.Broker.LeafNodes;
        Assert.Equal(TimeSpan.FromSeconds(3), leaf.ReconnectInterval);
        Assert.Equal(2, leaf.Remotes.Count);
        Assert.Equal(["nats-leaf://u:p@127.0.0.1:7422"], leaf.Remotes[0].Urls);
        Assert.Equal("A", leaf.Remotes[0].Account);
        Assert.Equal(["a.>"], leaf.Remotes[0].DenyImports);
        Assert.Equal(["b"], leaf.Remotes[0].DenyExports);
        Assert.Equal(["nats://h1:1", "nats://h2:2"], leaf.Remotes[1].Urls);
        Assert.True(leaf.Remotes[1].NoRandomize);
        Assert.Equal("/tmp/x.creds", leaf.Remotes[1].Credentials);
    }

    [Fact]
    public void The_hubs_keys_bind_to_the_hub_options()
    {
        var mapping = ConfMappingTests.Map(
            "accounts { A: {} }\n" +
            "leafnodes {\n  listen: \"127.0.0.1:7422\"\n  advertise: \"edge.example:7422\"\n  no_advertise: true\n" +
            "  authorization { timeout: 1.5, users: [ { user: a, password: p, account: A }, { username: b, pass: q } ] }\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Empty(mapping.Diagnostics);
        var hub = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.LeafNodes.Hub;
        Assert.Equal(("127.0.0.1", 7422, "edge.example:7422", true), (hub.Host, hub.Port, hub.Advertise, hub.NoAdvertise));
        Assert.Equal(TimeSpan.FromSeconds(1.5), hub.AuthTimeout);
        Assert.Equal([("a", "p", "A"), ("b", "q", null)], hub.Users.Select(u => (u.User, u.Password, u.Account)).ToArray());
    }

    [Fact]
    public void A_port_alone_and_a_single_user_bind_too()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  port: -1\n  host: \"0.0.0.0\"\n  authorization { user: leaf, password: s3cret }\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        var hub = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.LeafNodes.Hub;
        Assert.Equal(("0.0.0.0", -1, "leaf", "s3cret"), (hub.Host, hub.Port, hub.User, hub.Password));
        Assert.True(hub.IsEnabled);
    }

    [Fact]
    public void Min_version_is_a_notice()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  listen: 7422\n  tls { }\n  min_version: \"2.8.0\"\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        Assert.Contains(mapping.Diagnostics, d => d.ToString() == "test.conf:4:3: Leaf node minimum version: not supported yet, ignoring \"min_version\"");
    }

    /// <summary>
    /// The listener's tls block (nats-server parseLeafNodes, parseTLS, GenTLSConfig): its files, verify, insecure and
    /// timeout; without <c>authorization.timeout</c> the CONNECT may take the TLS timeout and a second more
    /// (getDefaultAuthTimeout), with it the given one.
    /// </summary>
    [Theory]
    [InlineData("", 3.0, 2.0)]
    [InlineData(", timeout: 5", 6.0, 5.0)]
    [InlineData(", timeout: \"500ms\"", 1.5, 0.5)]
    public void Tls_on_the_listener_binds_with_nats_servers_timeouts(string timeout, double auth, double tls)
    {
        var mapping = ConfMappingTests.Map($"leafnodes {{\n  listen: 7422\n  tls {{ cert_file: \"c.pem\", key_file: \"k.pem\", ca_file: \"ca.pem\", verify: true, insecure: true{timeout} }}\n}}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        var hub = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.LeafNodes.Hub;
        var options = Assert.IsType<Broker.Core.LeafHubTlsOptions>(hub.Tls);
        Assert.Equal(("c.pem", "k.pem", "ca.pem", true, true), (options.CertFile, options.KeyFile, options.CaFile, options.Verify, options.Insecure));
        Assert.Equal((TimeSpan.FromSeconds(tls), TimeSpan.FromSeconds(auth)), (options.Timeout, hub.AuthTimeout));
    }

    [Fact]
    public void An_authorization_timeout_is_kept_beside_tls()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  listen: 7422\n  authorization { timeout: 4 }\n  tls { cert_file: \"c.pem\", key_file: \"k.pem\" }\n}");

        var hub = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()).Broker.LeafNodes.Hub;
        Assert.Equal(TimeSpan.FromSeconds(4), hub.AuthTimeout);
        Assert.False(hub.Tls!.Verify);
    }

    [Theory]
    [InlineData("tls { cert_file: \"c.pem\" }", "missing 'key_file' in TLS configuration")]
    [InlineData("tls { key_file: \"k.pem\" }", "missing 'cert_file' in TLS configuration")]
    public void A_listener_certificate_without_its_key_is_refused_with_nats_servers_text(string block, string text)
    {
        var mapping = ConfMappingTests.Map($"leafnodes {{\n  listen: 7422\n  {block}\n}}");
        var error = Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()));

        Assert.Equal(text, error.Message);
    }

    [Theory]
    [InlineData("verify_and_map: true", "\"verify_and_map\": not supported yet (leaf node users named by their TLS certificates (verify_and_map))")]
    [InlineData("pinned_certs: []", "\"pinned_certs\": not supported yet (on the leaf node listener's TLS)")]
    public void What_the_listener_cannot_do_yet_is_an_error(string key, string error)
    {
        var mapping = ConfMappingTests.Map($"leafnodes {{\n  listen: 7422\n  tls {{ cert_file: \"c.pem\", key_file: \"k.pem\", {key} }}\n}}");

        Assert.True(mapping.HasErrors);
        Assert.Contains(mapping.Diagnostics, d => d.Message.StartsWith(error, StringComparison.Ordinal));
    }

    /// <summary>nats-server's validateLeafNodeAuthOptions and validateLeafNode texts (nats-server -t gives them with the block's position).</summary>
    [Theory]
    [InlineData("authorization { user: a, password: b, users: [ { user: c } ] }", "can not have a single user/pass and a users array")]
    [InlineData("authorization { users: [ { user: c }, { user: c } ] }", "duplicate user \"c\" detected in leafnode authorization")]
    [InlineData("authorization { users: [ { user: c, account: NOPE } ] }", "cannot find local account \"NOPE\" specified in leafnode authorization")]
    [InlineData("authorization { user: a, account: NOPE }", "cannot find local account \"NOPE\" specified in leafnode authorization")]
    public void Invalid_hub_authorization_is_refused_with_nats_servers_text(string block, string text)
    {
        var mapping = ConfMappingTests.Map($"leafnodes {{\n  listen: 7422\n  {block}\n}}");
        var error = Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()));

        Assert.Equal(text, error.Message);
    }

    [Theory]
    [InlineData("{ url: \"nats://a:1\", hub: true }", "\"hub\": not supported yet (a remote that is the hub of the other side)")]
    [InlineData("{ url: \"ws://a:1\", ws_no_masking: true }", "\"ws_no_masking\": not supported yet (unmasked WebSocket frames on leaf node remotes)")]
    [InlineData("{ url: \"nats://a:1\", tls: { handshake_first: true } }", "\"handshake_first\": not supported yet (TLS before the hub's INFO, nats-server 2.10)")]
    [InlineData("{ url: \"nats://a:1\", tls: { pinned_certs: [] } }", "\"pinned_certs\": not supported yet (on a leaf node remote's TLS)")]
    [InlineData("{ url: \"nats://a:1\", tls: { nope: 1 } }", "error parsing tls config, unknown field [\"nope\"]")]
    [InlineData("{ url: \"nats://a:1\", tls: { insecure: 1 } }", "error parsing tls config, expected 'insecure' to be a boolean")]
    [InlineData("{ url: \"nats://a:1\", tls: { ca_file: 1 } }", "error parsing tls config, expected 'ca_file' to be filename")]
    [InlineData("{ url: \"nats://a:1\", tls: { verify_cert_and_check_known_urls: true } }", "verify_cert_and_check_known_urls not supported in this context")]
    public void What_the_link_cannot_do_yet_is_an_error(string remote, string error)
    {
        var mapping = ConfMappingTests.Map($"leafnodes {{\n  remotes: [ {remote} ]\n}}");

        Assert.True(mapping.HasErrors);
        Assert.Contains(mapping.Diagnostics, d => d.Message.StartsWith(error, StringComparison.Ordinal));
    }

    [Fact]
    public void A_remotes_tls_block_and_websocket_urls_bind()
    {
        var mapping = ConfMappingTests.Map(
            "leafnodes {\n  remotes: [\n" +
            "    { url: \"tls://127.0.0.1:7422\", tls: { cert_file: \"c.pem\", key_file: \"k.pem\", ca_file: \"ca.pem\", verify: true, timeout: 0.5 } }\n" +
            "    { urls: [\"ws://h1:80\", \"wss://h2:443\"], ws_compression: true, tls: { insecure: true } }\n" +
            "    { url: \"nats://h3:1\", tls: { } }\n  ]\n}");

        Assert.False(mapping.HasErrors, string.Join("\n", mapping.Diagnostics));
        var settings = HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build());
        var remotes = settings.Broker.LeafNodes.Remotes;
        var tls = remotes[0].Tls!;
        Assert.Equal(("c.pem", "k.pem", "ca.pem", false, TimeSpan.FromSeconds(0.5)), (tls.CertFile, tls.KeyFile, tls.CaFile, tls.Insecure, tls.Timeout));
        Assert.Equal(["ws://h1:80", "wss://h2:443"], remotes[1].Urls);
        Assert.True(remotes[1].Tls!.Insecure);
        Assert.True(remotes[1].WebSocketCompression);
        Assert.False(remotes[0].WebSocketCompression);
        Assert.Equal(TimeSpan.FromSeconds(2), remotes[1].Tls!.Timeout);
        Assert.NotNull(remotes[2].Tls);
    }

    [Fact]
    public void A_certificate_without_its_key_is_refused_with_nats_servers_text()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  remotes: [ { url: \"nats://a:1\", tls: { cert_file: \"c.pem\" } } ]\n}");
        var error = Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()));

        Assert.Equal("missing 'key_file' in TLS configuration", error.Message);
    }

    [Fact]
    public void A_remote_mixing_websocket_and_other_urls_is_refused_with_nats_servers_text()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  remotes: [ { urls: [\"ws://u:p@a:1\", \"nats://b:2\"] } ]\n}");
        var error = Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()));

        // nats-server 2.9.10 at start: the same text.
        Assert.Equal("remote leaf node configuration cannot have a mix of websocket and non-websocket urls: [\"ws://u:xxxxx@a:1\" \"nats://b:2\"]", error.Message);
    }

    [Fact]
    public void A_remote_bound_to_an_unknown_account_is_refused_with_nats_servers_text()
    {
        var mapping = ConfMappingTests.Map("leafnodes {\n  remotes: [ { url: \"nats://a:1\", account: NOPE } ]\n}");
        var error = Assert.Throws<HostConfigurationException>(() => HostSettings.Bind(new ConfigurationBuilder().AddInMemoryCollection(mapping.Settings).Build()));

        Assert.Equal("cannot find local account \"NOPE\" specified in leafnode remote", error.Message);
    }
}
