using System.IO.Pipelines;
using System.Net.Security;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// The two loops of an established session: records from the peer are decrypted into the protocol's input pipe;
/// what the protocol writes is encrypted onto the inner transport. Each completes the inner pipe it used when it
/// ends, so the inner transport closes (after sending everything) exactly as it would without TLS.
/// </summary>
internal sealed partial class TlsConnection
{
    // Decrypted reads ask for this much buffer; a TLS record carries at most 16 KiB.
    private const int ReceiveBufferSize = 16 * 1024;

    private async Task ReceiveAsync(SslStream stream, PipeReader raw)
    {
        var writer = decryptedInput!.Writer;
        try
        {
            while (true)
            {
                var memory = writer.GetMemory(ReceiveBufferSize);
                var read = await stream.ReadAsync(memory).ConfigureAwait(false);
                if (read == 0)
                {
                    break;
                }

                writer.Advance(read);
                var flush = await writer.FlushAsync().ConfigureAwait(false);
                if (flush.IsCompleted || flush.IsCanceled)
                {
                    // The protocol stopped reading: it is closing the connection.
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException)
        {
            // A reset, a bad record or an abort: the protocol just sees the end of its input.
        }
        finally
        {
            await writer.CompleteAsync().ConfigureAwait(false);

            // Let the inner transport drain what still arrives, so our last bytes are not reset away.
            await raw.CompleteAsync().ConfigureAwait(false);
        }
    }

    private async Task SendAsync(SslStream stream, PipeWriter raw)
    {
        var reader = clearOutput!.Reader;
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                if (result.IsCanceled)
                {
                    break;
                }

                // Each segment counts as sent once encrypted into the socket's buffer, whose count then holds it: marked
                // after the whole buffer, what the socket took first was counted twice while the rest waited for the
                // socket to drain, and the broker adds both counts (slow consumers, producer stalls).
                var buffer = result.Buffer;
                foreach (var segment in buffer)
                {
                    await stream.WriteAsync(segment).ConfigureAwait(false);
                    clearOutput.MarkSent(segment.Length);
                }

                reader.AdvanceTo(buffer.End);
                if (result.IsCompleted)
                {
                    // Everything the protocol wrote is out: say goodbye (close_notify), as Go's tls.Conn.Close does.
                    await SayGoodbyeAsync(stream).ConfigureAwait(false);
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or InvalidOperationException or NotSupportedException)
        {
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
            await raw.CompleteAsync().ConfigureAwait(false);
        }
    }

    // close_notify is a courtesy: OpenSSL refuses it while a handshake message is still in flight ("shutdown while in
    // init", a client closing right after its handshake), and the connection ends either way.
    private static async ValueTask SayGoodbyeAsync(SslStream stream)
    {
        try
        {
            await stream.ShutdownAsync().ConfigureAwait(false);
        }
        catch (System.Security.Cryptography.CryptographicException)
        {
        }
    }
}
