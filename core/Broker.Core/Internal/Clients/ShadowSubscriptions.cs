using System.Buffers;
using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Stream imports through shadow subscriptions (nats-server's client.go <c>addShadowSubscriptions</c>): a subscription
/// that matches an import of its client's account also sits in the exporter's index as a shadow, so a publish in the
/// exporter reaches it as it reaches the exporter's own subscribers. On the subscribing side the shadows are made and
/// removed with the subscription (<see cref="Create"/>, <see cref="Remove"/>, stateless); on the producing side an
/// instance, made at a producer's first delivery through a shadow, holds that producer's buffer for the subjects an
/// import rewrites, touched only by the producer's own thread.
/// </summary>
internal sealed class ShadowSubscriptions(ClientBase producer)
{
    // The producer's buffer for subjects rewritten by a stream import on delivery.
    private byte[] importSubject = [];

    /// <summary>
    /// The shadows of <paramref name="subscription"/> of <paramref name="client"/>, inserted into the exporters' indexes,
    /// or null when it matches no import. Under the client's subscriptions lock, right after the subscription entered
    /// its account's own index (a lock per exporter's index is taken and released for each shadow: 3 → 4).
    /// </summary>
    public static Subscription[]? Create(ClientBase client, Subscription subscription)
    {
        var imports = client.Account.StreamImports;
        if (imports.Length == 0 || ShadowMatcher.Match(imports, subscription.SubjectString) is not { } matches)
        {
            return null;
        }

        var shadows = new List<Subscription>(matches.Count);
        foreach (var (import, subject) in matches)
        {
            var shadow = new Subscription(client, Encoding.UTF8.GetBytes(subject), subscription.Queue, subscription.Sid)
            {
                Import = import,
                Origin = subscription,
            };
            if (import.Exporter.SubList.Insert(shadow))
            {
                shadows.Add(shadow);
            }
        }

        return shadows.Count > 0 ? [.. shadows] : null;
    }

    /// <summary>Closes the shadows and takes them out of their exporters' indexes.</summary>
    public static void Remove(Subscription[]? shadows)
    {
        if (shadows is null)
        {
            return;
        }

        foreach (var shadow in shadows)
        {
            shadow.Closed = true;
            shadow.Import!.Exporter.SubList.Remove(shadow);
        }
    }

    /// <summary>
    /// Delivers through a shadow subscription: under the import's subject, to the importer's subscription it stands
    /// for (its sid and its delivery checks).
    /// </summary>
    public bool TryDeliver(Subscription shadow, Subscription origin, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
        // A subscription of an account's import client is its own origin: the message crosses a service import.
        if (ReferenceEquals(origin, shadow))
        {
            producer.ForwardToImportClient(shadow, subject, deliverAs, replyTo, headers, payload);
            return true;
        }

        var target = origin.Client;

        // A message forwarded across a service import is not passed on to stream importers (pmrMsgImportedFromService).
        if (origin.Closed || producer.Forwarding)
        {
            return false;
        }

        // A message delivered as another subject (JetStream's deliver subjects) keeps that subject, as nats-server
        // swaps the roles then; otherwise the import decides the subject.
        var delivered = subject == deliverAs ? shadow.Import!.DeliverySubject(subject, ref importSubject) : deliverAs;
        if (origin.CheckDenyOnDelivery && target.Permissions is { } permissions && !permissions.IsDeliveryAllowed(delivered, origin.Queue))
        {
            return false;
        }

        // As nats-server, whose shadow is a copy made before any UNSUB limit: a delivery through an import does not
        // count toward the subscription's auto-unsubscribe limit (nor, therefore, in its delivered count).
        producer.DeliverCounted(target, origin, delivered, replyTo, headers, payload);
        return true;
    }
}
