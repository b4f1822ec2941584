using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Broker.Abstractions;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Tests.Clients;

/// <summary>A transport connection over two in-memory pipes, for the collaborators of a NATS connection.</summary>
internal sealed class FakeConnection : TransportConnection
{
    private readonly CancellationTokenSource closed = new();

    public FakeConnection(EndPoint? local = null)
    {
        LocalEndPoint = local ?? new IPEndPoint(IPAddress.Loopback, 4222);
        Transport = new DuplexPipe(new Pipe());
    }

    public override string ConnectionId => "fake";

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint { get; }

    public override EndPoint? RemoteEndPoint { get; } = new IPEndPoint(IPAddress.Loopback, 50000);

    public override TransportSettings Settings { get; } = new();

    public override CancellationToken ConnectionClosed => closed.Token;

    public string? Aborted { get; private set; }

    public override void Abort(string reason) => Aborted = reason;

    public override ValueTask DisposeAsync()
    {
        closed.Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>Both ends of one pipe: what is written to the output can be read back from the input.</summary>
    public sealed class DuplexPipe(Pipe pipe) : IDuplexPipe
    {
        public PipeReader Input { get; } = pipe.Reader;

        public PipeWriter Output { get; } = pipe.Writer;
    }
}

/// <summary>TLS as a middleware would offer it; <see cref="UpgradeAsync"/> answers <see cref="Result"/> and can swap the connection's pipes.</summary>
internal sealed class FakeTls : ITlsConnectionFeature
{
    public bool IsEstablished { get; set; }

    public bool HandshakeFirst { get; set; }

    public bool Required { get; set; }

    public bool ClientCertificateRequired { get; set; }

    public bool MapClientCertificateToUser { get; set; }

    public TimeSpan HandshakeTimeout { get; set; } = TimeSpan.FromSeconds(2);

    public SslProtocols Protocol => SslProtocols.Tls13;

    public TlsCipherSuite CipherSuite => TlsCipherSuite.TLS_AES_128_GCM_SHA256;

    public X509Certificate2? ClientCertificate { get; set; }

    public TlsUpgradeResult Result { get; set; } = TlsUpgradeResult.Upgraded;

    /// <summary>Set to swap in decrypted pipes on a successful upgrade, as a middleware does.</summary>
    public Action? OnUpgraded { get; set; }

    public ValueTask<TlsUpgradeResult> UpgradeAsync(CancellationToken cancellationToken)
    {
        if (Result == TlsUpgradeResult.Upgraded)
        {
            IsEstablished = true;
            OnUpgraded?.Invoke();
        }

        return ValueTask.FromResult(Result);
    }
}

/// <summary>A connection as <see cref="KeepAlive"/> sees it, recording what it is asked to do.</summary>
internal sealed class FakeKeepAliveConnection : IKeepAliveConnection
{
    public TimeSpan PingInterval { get; set; } = TimeSpan.FromMinutes(2);

    public int MaxPingsOutstanding { get; set; } = 2;

    public bool IsClosed { get; set; }

    public int Pings;

    public int StaleCloses;

    public TaskCompletionSource FirstPing { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void SendPing()
    {
        Interlocked.Increment(ref Pings);
        FirstPing.TrySetResult();
    }

    public void CloseStale()
    {
        Interlocked.Increment(ref StaleCloses);
        IsClosed = true;
    }
}
