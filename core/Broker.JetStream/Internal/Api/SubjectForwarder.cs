using System.Buffers;
using System.Text;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Api;

/// <summary>
/// Republishes every message under one subject prefix to the same subject under another, reply and headers kept: how
/// nats-server's account mappings carry <c>$JS.&lt;domain&gt;.API.&gt;</c> to the local API (<c>domain</c>) and, on a
/// server without JetStream, <c>$JS.API.&gt;</c> to a domain's API (<c>default_js_domain</c>).
/// </summary>
/// <remarks>
/// A mapping in nats-server happens before the interest lookup, so a request to a subject nobody serves gets "no
/// responders"; here the forwarder is that subject's subscriber, so it answers the 503 itself when the target has no
/// interest.
/// </remarks>
internal sealed class SubjectForwarder : IDisposable
{
    /// <summary>The status message nats-server sends a requester when nothing is subscribed to the request's subject.</summary>
    internal static readonly ReadOnlySequence<byte> NoResponders = new("NATS/1.0 503\r\n\r\n"u8.ToArray());

    private readonly byte[] from;
    private readonly byte[] to;
    private readonly IBusClient client;
    private readonly ISubjectInterest? interest;
    private readonly IBusSubscription subscription;

    // server/jetstream_api.go generateJSMappingTable: what a domain's API maps to (the $KV and $OBJ views keep their own spaces).
    private static readonly (string From, string To)[] DomainTable =
    [
        ("INFO", "$JS.API.INFO"), ("STREAM.", "$JS.API.STREAM."), ("CONSUMER.", "$JS.API.CONSUMER."),
        ("DIRECT.", "$JS.API.DIRECT."), ("META.", "$JS.API.META."), ("SERVER.", "$JS.API.SERVER."),
        ("ACCOUNT.", "$JS.API.ACCOUNT."), ("$KV.", "$KV."), ("$OBJ.", "$OBJ."),
    ];

    /// <summary>
    /// nats-server's mappings of a served domain's API onto the account's own (<c>$JS.&lt;domain&gt;.API.STREAM.&gt;</c> to
    /// <c>$JS.API.STREAM.&gt;</c>, ..., <c>$JS.&lt;domain&gt;.API.$KV.&gt;</c> to <c>$KV.&gt;</c>): one forwarder each, so the
    /// subjects listened on (and announced over leaf node links) are nats-server's.
    /// </summary>
    public static SubjectForwarder[] ForDomain(string domain, IBusClient client, ISubjectInterest? interest)
        => [.. DomainTable.Select(m => new SubjectForwarder("$JS." + domain + ".API." + m.From, m.To, client, interest))];

    /// <summary>Subscribes to <c>&lt;from&gt;&gt;</c>, or to <paramref name="from"/> alone when it names one subject.</summary>
    /// <param name="from">The prefix listened on, with its trailing dot (<c>$JS.hub.API.</c>), or one subject (<c>$JS.hub.API.INFO</c>).</param>
    /// <param name="to">The prefix published to, with its trailing dot (<c>$JS.API.</c>), or the one subject.</param>
    /// <param name="client">The bus client to listen and publish with; owned by the caller.</param>
    /// <param name="interest">The broker's interest check; <see langword="null"/> to forward without one.</param>
    public SubjectForwarder(string from, string to, IBusClient client, ISubjectInterest? interest)
    {
        this.from = Encoding.UTF8.GetBytes(from);
        this.to = Encoding.UTF8.GetBytes(to);
        this.client = client;
        this.interest = interest;
        subscription = client.Subscribe(from.EndsWith('.') ? from + ">" : from, null, Forward);
    }

    public void Dispose() => subscription.Dispose();

    private void Forward(in BusMessage message)
    {
        var subject = message.Subject;
        var length = to.Length + subject.Length - from.Length;
        var target = length <= 256 ? stackalloc byte[length] : new byte[length];
        to.CopyTo(target);
        subject[from.Length..].CopyTo(target[to.Length..]);
        if (interest is not null && !interest.HasInterest(target))
        {
            if (!message.ReplyTo.IsEmpty)
            {
                client.Publish(message.ReplyTo, default, NoResponders, ReadOnlySequence<byte>.Empty);
            }

            return;
        }

        client.Publish(target, message.ReplyTo, message.Headers, message.Payload);
    }
}
