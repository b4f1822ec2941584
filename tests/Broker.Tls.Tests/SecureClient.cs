using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Broker.TestKit;

namespace Broker.Tls.Tests;

/// <summary>How a <see cref="SecureClient"/> starts.</summary>
public enum TlsStart
{
    /// <summary>Read INFO in clear text, then start TLS (the NATS upgrade).</summary>
    Upgrade,

    /// <summary>Start TLS at once, then read INFO (TLS first).</summary>
    First,

    /// <summary>Read INFO and stay in clear text.</summary>
    None,
}

/// <summary>
/// A NATS connection at the byte level over TLS (raw <see cref="SslStream"/>), for tests where the handshake, the
/// exact lines or the close matter. Every wait has a deadline.
/// </summary>
public sealed class SecureClient : IAsyncDisposable
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(5);

    private readonly Socket socket;
    private readonly NetworkStream network;
    private readonly byte[] buffer = new byte[64 * 1024];
    private readonly ReceivedBytes pending = new();
    private Stream stream;

    private SecureClient(Socket socket)
    {
        this.socket = socket;
        network = new NetworkStream(socket, ownsSocket: false);
        stream = network;
    }

    public string? Info { get; private set; }

    public SslStream? Ssl { get; private set; }

    public bool Closed { get; private set; }

    public static async Task<SecureClient> ConnectAsync(
        int port,
        TlsStart start = TlsStart.Upgrade,
        X509Certificate2? certificate = null,
        SslProtocols protocols = SslProtocols.None)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using (var cts = new CancellationTokenSource(DefaultTimeout))
        {
            await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cts.Token);
        }

        var client = new SecureClient(socket);
        try
        {
            if (start == TlsStart.First)
            {
                await client.StartTlsAsync(certificate, protocols);
            }

            client.Info = await client.ReadLineAsync();
            if (!client.Info.StartsWith("INFO ", StringComparison.Ordinal))
            {
                throw new InvalidOperationException("Expected INFO first, got: " + client.Info);
            }

            if (start == TlsStart.Upgrade)
            {
                await client.StartTlsAsync(certificate, protocols);
            }

            return client;
        }
        catch
        {
            await client.DisposeAsync();
            throw;
        }
    }

    /// <summary>Connects without reading anything (for tests of what the server does first).</summary>
    public static async Task<SecureClient> OpenAsync(int port)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), cts.Token);
        return new SecureClient(socket);
    }

    /// <summary>Performs the client side of the handshake; throws <see cref="AuthenticationException"/> or <see cref="IOException"/> when refused.</summary>
    public async Task StartTlsAsync(X509Certificate2? certificate = null, SslProtocols protocols = SslProtocols.None)
    {
        var ssl = new SslStream(network, leaveInnerStreamOpen: true);
        var options = new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            EnabledSslProtocols = protocols,
            CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
            RemoteCertificateValidationCallback = (_, cert, _, _) => TestCertificates.Shared.ValidateServer(cert as X509Certificate2),
            ClientCertificates = certificate is null ? null : [certificate],
            LocalCertificateSelectionCallback = certificate is null ? null : (_, _, _, _, _) => certificate,
        };
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await ssl.AuthenticateAsClientAsync(options, cts.Token);
        Ssl = ssl;
        stream = ssl;
    }

    public Task SendAsync(string text) => SendAsync(Encoding.Latin1.GetBytes(text));

    public async Task SendAsync(byte[] data)
    {
        using var cts = new CancellationTokenSource(DefaultTimeout);
        await stream.WriteAsync(data, cts.Token);
        await stream.FlushAsync(cts.Token);
    }

    public async Task<string> ReadLineAsync(TimeSpan? timeout = null)
        => await TryReadLineAsync(timeout ?? DefaultTimeout)
            ?? throw new IOException(Closed ? "The server closed the connection." : "Timed out waiting for a line.");

    public async Task<string?> TryReadLineAsync(TimeSpan timeout)
    {
        using var cts = new CancellationTokenSource(timeout);
        while (true)
        {
            var line = pending.TakeLine();
            if (line is not null)
            {
                return line;
            }

            if (Closed || !await FillAsync(cts.Token))
            {
                return null;
            }
        }
    }

    /// <summary>Reads lines until one equals <paramref name="terminator"/>; throws on timeout or close.</summary>
    public async Task<List<string>> ReadUntilAsync(string terminator, TimeSpan? timeout = null)
    {
        var lines = new List<string>();
        while (true)
        {
            var line = await ReadLineAsync(timeout);
            lines.Add(line);
            if (line == terminator)
            {
                return lines;
            }
        }
    }

    /// <summary>Waits until the server closes the connection; returns the lines received meanwhile.</summary>
    public async Task<List<string>> ExpectClosedAsync(TimeSpan? timeout = null)
    {
        var lines = new List<string>();
        using var cts = new CancellationTokenSource(timeout ?? DefaultTimeout);
        while (true)
        {
            var line = pending.TakeLine();
            if (line is not null)
            {
                lines.Add(line);
                continue;
            }

            if (Closed)
            {
                return lines;
            }

            if (!await FillAsync(cts.Token) && !Closed)
            {
                throw new TimeoutException("The server did not close the connection; lines: " + string.Join(" | ", lines));
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Ssl is not null)
        {
            await Ssl.DisposeAsync();
        }

        await network.DisposeAsync();
        socket.Dispose();
    }

    private async Task<bool> FillAsync(CancellationToken cancellationToken)
    {
        try
        {
            var read = await stream.ReadAsync(buffer, cancellationToken);
            if (read == 0)
            {
                Closed = true;
                return false;
            }

            pending.Append(buffer.AsSpan(0, read));
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
        catch (Exception ex) when (ex is IOException or SocketException or AuthenticationException or ObjectDisposedException)
        {
            Closed = true;
            return false;
        }
    }
}
