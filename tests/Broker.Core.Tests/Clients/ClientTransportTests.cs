using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Clients;

/// <summary>The transport under a NATS connection: TLS started after INFO, the pipes it swaps in, and what INFO says of it.</summary>
public sealed class ClientTransportTests
{
    [Fact]
    public async Task Without_tls_to_start_nothing_changes()
    {
        var connection = new FakeConnection();
        var transport = new ClientTransport(connection, new ConnectionOutput(connection, connection.Transport.Output));
        var input = transport.Input;

        Assert.Equal(TlsUpgradeResult.Upgraded, await transport.StartTlsAsync(CancellationToken.None));
        Assert.Same(input, transport.Input);
        Assert.Null(transport.Tls);
    }

    [Fact]
    public async Task An_upgrade_switches_both_pipes_to_the_decrypted_ones()
    {
        var connection = new FakeConnection();
        var output = new ConnectionOutput(connection, connection.Transport.Output);
        var decrypted = new FakeConnection.DuplexPipe(new Pipe());
        var tls = new FakeTls { OnUpgraded = () => connection.Transport = decrypted };
        connection.Features.Set<ITlsConnectionFeature>(tls);
        var transport = new ClientTransport(connection, output);

        Assert.Equal(TlsUpgradeResult.Upgraded, await transport.StartTlsAsync(CancellationToken.None));
        Assert.Same(decrypted.Input, transport.Input);

        // What is written now goes to the decrypted pipe.
        lock (output.Gate)
        {
            output.Write("PING\r\n"u8);
            output.Complete(default);
        }

        using var cancel = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var read = await decrypted.Input.ReadAsync(cancel.Token);
        Assert.Equal("PING\r\n"u8.ToArray(), read.Buffer.ToArray());
    }

    [Fact]
    public async Task A_refused_upgrade_keeps_the_clear_pipes_and_says_why()
    {
        var connection = new FakeConnection();
        connection.Features.Set<ITlsConnectionFeature>(new FakeTls { Result = TlsUpgradeResult.TlsRequired });
        var transport = new ClientTransport(connection, new ConnectionOutput(connection, connection.Transport.Output));
        var input = transport.Input;

        Assert.Equal(TlsUpgradeResult.TlsRequired, await transport.StartTlsAsync(CancellationToken.None));
        Assert.Same(input, transport.Input);
    }

    [Fact]
    public void Info_describes_tls_and_a_listener_other_than_the_client_port()
    {
        var connection = new FakeConnection(new IPEndPoint(IPAddress.Loopback, 8443));
        connection.Features.Set(new ListenerDefinition { Name = "websocket", EndPoint = new IPEndPoint(IPAddress.Parse("10.0.0.1"), 0) });
        connection.Features.Set<ITlsConnectionFeature>(new FakeTls { IsEstablished = true, ClientCertificateRequired = true });
        var transport = new ClientTransport(connection, new ConnectionOutput(connection, connection.Transport.Output));
        var info = new ServerInfo { Host = "0.0.0.0", Port = 4222 };

        transport.Describe(info);

        Assert.Equal("10.0.0.1", info.Host);
        Assert.Equal(8443, info.Port);
        Assert.True(info.TlsRequired);
        Assert.Null(info.TlsAvailable);
        Assert.True(info.TlsVerify);
    }

    [Fact]
    public void Info_offers_tls_that_is_available_but_not_required()
    {
        var connection = new FakeConnection();
        connection.Features.Set<ITlsConnectionFeature>(new FakeTls());
        var transport = new ClientTransport(connection, new ConnectionOutput(connection, connection.Transport.Output));
        var info = new ServerInfo { Host = "0.0.0.0", Port = 4222 };

        transport.Describe(info);

        Assert.Equal(("0.0.0.0", 4222), (info.Host, info.Port));
        Assert.Null(info.TlsRequired);
        Assert.True(info.TlsAvailable);
        Assert.Null(info.TlsVerify);
    }
}
