using System.Globalization;
using System.Text;
using System.Threading.Channels;
using Broker.Adapters.Mqtt.Internal.Sessions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// Retained messages in JetStream's <c>$MQTT_rmsgs</c>: one message per NATS subject on
/// <c>$MQTT.rmsgs.&lt;subject&gt;</c> (the stream keeps one per subject), its payload the retained payload, its
/// headers the MQTT topic (<c>Nmqtt-Topic</c>), the QoS (<c>Nmqtt-Pub</c>, nats-server's header) and the MQTT 5
/// property block in base64 (<c>Nmqtt-Props</c>). Writes come from the publish path and must not make it wait: they
/// are queued and applied in order by one loop, each waiting for its PubAck (or purge answer); a failure is logged and
/// the next write goes on.
/// </summary>
internal sealed class JetStreamRetainedStore : IRetainedStore, IAsyncDisposable
{
    private readonly JetStreamClient api;
    private readonly ILogger logger;
    private readonly Channel<Write> writes = Channel.CreateUnbounded<Write>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Task writer;

    public JetStreamRetainedStore(JetStreamClient api, ILogger logger)
    {
        this.api = api;
        this.logger = logger;
        writer = Task.Run(WriteLoopAsync);
    }

    /// <summary>A queued write: a message to store, a subject to purge, or a flush marker.</summary>
    private sealed record Write(string Subject, RetainedMessage? Message, TaskCompletionSource? Flushed);

    public async Task<IReadOnlyList<RetainedMessage>> LoadAllAsync(CancellationToken cancellationToken)
    {
        var result = new List<RetainedMessage>();
        foreach (var stored in await api.ReadAllAsync(MqttStreams.RetainedStream, null, cancellationToken).ConfigureAwait(false))
        {
            if (!stored.Subject.StartsWith(MqttStreams.RetainedSubjectPrefix, StringComparison.Ordinal))
            {
                // The stream is ours, subjects $MQTT.rmsgs.>; an operator may have widened it.
                continue;
            }

            var subject = stored.Subject[MqttStreams.RetainedSubjectPrefix.Length..];
            if (Decode(subject, stored, out var reason) is { } message)
            {
                result.Add(message);
            }
            else
            {
                MqttLog.RetainedRecordInvalid(logger, subject, reason);
            }
        }

        return result;
    }

    public void Save(RetainedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        writes.Writer.TryWrite(new Write(message.Subject, message, null));
    }

    public void Delete(string subject) => writes.Writer.TryWrite(new Write(subject, null, null));

    public Task FlushAsync()
    {
        var flushed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        return writes.Writer.TryWrite(new Write("", null, flushed)) ? flushed.Task : Task.CompletedTask;
    }

    /// <summary>Stops taking writes and waits for the queued ones.</summary>
    public async ValueTask DisposeAsync()
    {
        writes.Writer.TryComplete();
        await writer.ConfigureAwait(false);
    }

    /// <summary>The header block of a stored retained message.</summary>
    public static byte[] EncodeHeaders(RetainedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        var text = new StringBuilder("NATS/1.0\r\n")
            .Append("Nmqtt-Pub: ").Append(message.Qos.ToString(CultureInfo.InvariantCulture)).Append("\r\n")
            .Append("Nmqtt-Topic: ").Append(message.Topic).Append("\r\n");
        if (message.Properties.Length > 0)
        {
            text.Append("Nmqtt-Props: ").Append(Convert.ToBase64String(message.Properties)).Append("\r\n");
        }

        return Encoding.UTF8.GetBytes(text.Append("\r\n").ToString());
    }

    /// <summary>A retained message from its stored form, or <see langword="null"/> with the reason it is not valid.</summary>
    public static RetainedMessage? Decode(string subject, FetchedMessage stored, out string reason)
    {
        ArgumentNullException.ThrowIfNull(stored);
        string? topic = null;
        byte? qos = null;
        byte[] properties = [];
        var lines = Encoding.UTF8.GetString(stored.Headers).Split("\r\n");
        foreach (var line in lines.Skip(1))
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0)
            {
                continue;
            }

            var value = line[(colon + 1)..].Trim();
            switch (line[..colon])
            {
                case "Nmqtt-Topic":
                    topic = value;
                    break;
                case "Nmqtt-Pub" when byte.TryParse(value.AsSpan(0, Math.Min(1, value.Length)), NumberStyles.None, CultureInfo.InvariantCulture, out var parsed) && parsed <= 2:
                    qos = parsed;
                    break;
                case "Nmqtt-Props":
                    try
                    {
                        properties = Convert.FromBase64String(value);
                    }
                    catch (FormatException)
                    {
                        reason = "Nmqtt-Props is not base64";
                        return null;
                    }

                    break;
            }
        }

        reason = topic is null ? "no Nmqtt-Topic header" : qos is null ? "no valid Nmqtt-Pub header" : stored.Data.Length == 0 ? "empty payload" : "";
        return reason.Length == 0 ? new RetainedMessage(subject, topic!, qos!.Value, stored.Data, properties) { SetAt = stored.Timestamp / 1_000_000 } : null;
    }

    private async Task WriteLoopAsync()
    {
        await foreach (var write in writes.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            if (write.Flushed is { } flushed)
            {
                flushed.TrySetResult();
                continue;
            }

            var subject = MqttStreams.RetainedSubjectPrefix + write.Subject;
            try
            {
                if (write.Message is { } message)
                {
                    await api.PublishAsync(subject, EncodeHeaders(message), message.Payload, CancellationToken.None).ConfigureAwait(false);
                }
                else
                {
                    await api.PurgeSubjectAsync(MqttStreams.RetainedStream, subject, CancellationToken.None).ConfigureAwait(false);
                }
            }
            catch (Exception ex) when (ex is JetStreamApiException or ObjectDisposedException)
            {
                MqttLog.RetainedStoreFailed(logger, write.Subject, write.Message is null ? "delete" : "save", ex);
            }
        }
    }
}
