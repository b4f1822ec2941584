using System.IO.Pipelines;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Monitoring.Http;

/// <summary>
/// Serves HTTP/1.1 on one connection: requests are read one after another (pipelined ones too) and answered in
/// order, the connection kept alive unless the client asks otherwise. Every wait is bounded: the request head must
/// arrive within <see cref="MonitoringOptions.RequestHeadersTimeout"/> and an idle kept-alive connection is closed
/// after <see cref="MonitoringOptions.KeepAliveTimeout"/>. Bad bytes get a 400 and the connection is closed.
/// </summary>
internal sealed class HttpConnection
{
    /// <summary>Largest request line plus header fields accepted (Go allows 1 MiB; the monitor needs far less).</summary>
    public const int MaxHeadBytes = 16 * 1024;

    private readonly TransportConnection connection;
    private readonly PipeReader input;
    private readonly PipeWriter output;
    private readonly MonitorRouter router;
    private readonly MonitoringOptions options;
    private readonly ILogger logger;

    public HttpConnection(TransportConnection connection, MonitorRouter router, MonitoringOptions options, ILogger logger)
    {
        this.connection = connection;
        input = connection.Transport.Input;
        output = connection.Transport.Output;
        this.router = router;
        this.options = options;
        this.logger = logger;
    }

    public async Task RunAsync(CancellationToken stopping)
    {
        try
        {
            var first = true;
            while (true)
            {
                var outcome = await ReadRequestAsync(first, stopping).ConfigureAwait(false);
                first = false;
                if (outcome.Request is not { } request)
                {
                    if (outcome.Error is { } error)
                    {
                        MonitorLog.BadRequest(logger, connection.RemoteEndPoint?.ToString() ?? "?", error.StatusCode, error.Message);
                        HttpResponse.Text(error.StatusCode, error.StatusCode + " " + error.Message + "\n").WriteTo(output, headOnly: false, close: true);
                        await output.FlushAsync(stopping).ConfigureAwait(false);
                    }

                    return;
                }

                var response = request.Method is "GET" or "HEAD" ? router.Handle(request) : HttpResponse.MethodNotAllowed();

                // A body we do not read would be taken for the next request: answer, then close.
                var close = !request.KeepAlive || request.HasBody;
                response.WriteTo(output, request.IsHead, close, keepAliveHeader: request.IsHttp10);
                var flush = await output.FlushAsync(stopping).ConfigureAwait(false);
                if (close || flush.IsCompleted || flush.IsCanceled)
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
        finally
        {
            await input.CompleteAsync().ConfigureAwait(false);
            await output.CompleteAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Reads the next request head. Returns no request and no error when the peer closed, the broker is stopping or
    /// the connection stayed idle too long; a 408 error when a request began but did not complete in time.
    /// </summary>
    private async Task<(HttpRequest? Request, HttpError? Error)> ReadRequestAsync(bool first, CancellationToken stopping)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        timeout.CancelAfter(first ? options.RequestHeadersTimeout : options.KeepAliveTimeout);
        var received = false;
        while (true)
        {
            ReadResult result;
            try
            {
                result = await input.ReadAsync(timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!stopping.IsCancellationRequested)
            {
                return received ? (null, new HttpError(408, "Request Timeout")) : (null, null);
            }

            var buffer = result.Buffer;
            if (!received && !buffer.IsEmpty)
            {
                // A kept-alive connection's next request has begun: its head must now arrive within the headers
                // timeout. The first request's timeout already runs from the accept, as Go's ReadHeaderTimeout does.
                received = true;
                if (!first)
                {
                    timeout.CancelAfter(options.RequestHeadersTimeout);
                }
            }

            var status = HttpRequestParser.TryParse(buffer, MaxHeadBytes, out var consumed, out var request, out var error);
            switch (status)
            {
                case HttpParseStatus.Complete:
                    input.AdvanceTo(consumed);
                    return (request, null);
                case HttpParseStatus.Error:
                    input.AdvanceTo(buffer.End);
                    return (null, error);
            }

            input.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted || result.IsCanceled)
            {
                return (null, null);
            }
        }
    }
}
