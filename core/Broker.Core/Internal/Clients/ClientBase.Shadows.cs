using System.Text;
using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Stream imports on the subscribing side (nats-server's shadow subscriptions, client.go
/// <c>addShadowSubscriptions</c>): a subscription of this client that matches an import of its account also sits in
/// the exporter's index as a shadow, so a publish in the exporter reaches it as it reaches the exporter's own
/// subscribers. The shadows come and go with the subscription and are rebuilt when a reload changes the imports.
/// </summary>
internal abstract partial class ClientBase
{
    // The producer's buffer for subjects rewritten by a stream import on delivery.
    private byte[] importSubject = [];

    /// <summary>
    /// Replaces the shadows of every subscription after the account's imports were replaced (reload). A lock per
    /// exporter's index is taken and released for each shadow, under the subscriptions lock (3 → 4).
    /// </summary>
    public void RebuildShadows()
    {
        lock (subscriptionsLock)
        {
            foreach (var subscription in subscriptions.Values)
            {
                var previous = subscription.Shadows;
                subscription.Shadows = null;
                RemoveShadows(previous);
                AddShadows(subscription);
            }
        }
    }

    // Under subscriptionsLock, right after the subscription entered the account's own index.
    private void AddShadows(Subscription subscription)
    {
        var imports = Account.StreamImports;
        if (imports.Length == 0 || ShadowMatcher.Match(imports, subscription.SubjectString) is not { } matches)
        {
            return;
        }

        var shadows = new List<Subscription>(matches.Count);
        foreach (var (import, subject) in matches)
        {
            var shadow = new Subscription(this, Encoding.UTF8.GetBytes(subject), subscription.Queue, subscription.Sid)
            {
                Import = import,
                Origin = subscription,
            };
            if (import.Exporter.SubList.Insert(shadow))
            {
                shadows.Add(shadow);
            }
        }

        subscription.Shadows = shadows.Count > 0 ? [.. shadows] : null;
    }

    private static void RemoveShadows(Subscription[]? shadows)
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
    private bool TryDeliverImported(Subscription shadow, Subscription origin, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> deliverAs, ReadOnlySpan<byte> replyTo, in System.Buffers.ReadOnlySequence<byte> headers, in System.Buffers.ReadOnlySequence<byte> payload)
    {
        // A subscription of an account's import client is its own origin: the message crosses a service import.
        if (ReferenceEquals(origin, shadow))
        {
            ForwardToImportClient(shadow, subject, deliverAs, replyTo, headers, payload);
            return true;
        }

        var target = origin.Client;

        // A message forwarded across a service import is not passed on to stream importers (pmrMsgImportedFromService).
        if (origin.Closed || Forwarding)
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
        DeliverCounted(target, origin, delivered, replyTo, headers, payload);
        return true;
    }
}
