namespace Broker.Core.Internal.Clients;

/// <summary>
/// Stream imports on the subscribing side: each subscription's shadows in the exporters' indexes
/// (<see cref="ShadowSubscriptions"/>) come and go with it and are rebuilt when the account's imports change.
/// </summary>
internal abstract partial class ClientBase
{
    // This producer's side of deliveries through shadows; made at its first one, only its own thread touches it.
    private ShadowSubscriptions? shadowDelivery;

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
                ShadowSubscriptions.Remove(previous);
                subscription.Shadows = ShadowSubscriptions.Create(this, subscription);
            }
        }
    }
}
