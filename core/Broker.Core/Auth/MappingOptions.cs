using Broker.Core.Internal.Accounts;

namespace Broker.Core.Auth;

/// <summary>
/// One subject mapping of nats-server's <c>mappings { }</c> (top level: the global account; or an account's): every
/// publish of a client of the account whose subject matches <see cref="Source"/> is routed, and delivered, with the
/// subject of one of <see cref="Destinations"/> instead, chosen by weight.
/// </summary>
/// <remarks>
/// A destination may use the source's wildcards: <c>$1</c> or <c>{{wildcard(1)}}</c>, and nats-server 2.9's functions
/// <c>{{partition(n, i...)}}</c>, <c>{{splitFromLeft(i, n)}}</c>, <c>{{splitFromRight(i, n)}}</c>,
/// <c>{{sliceFromLeft(i, n)}}</c>, <c>{{sliceFromRight(i, n)}}</c> and <c>{{split(i, sep)}}</c>. When the weights of
/// the destinations add up to less than 100, the rest of the publishes keep their subject (unless the source is
/// listed as a destination itself, as nats-server treats it).
/// </remarks>
public sealed class MappingOptions
{
    /// <summary>The subject published to, wildcards allowed (<c>orders.*</c>). Required.</summary>
    public string Source { get; set; } = "";

    /// <summary>The destinations; one with weight 100 for a plain mapping. Default empty (the publishes keep their subject).</summary>
    public IList<MappingDestinationOptions> Destinations { get; set; } = [];

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public MappingOptions Clone() => new()
    {
        Source = Source,
        Destinations = [.. Destinations.Select(d => d.Clone())],
    };

    /// <summary>Checks the mapping as nats-server does when it adds it to an account.</summary>
    /// <exception cref="InvalidOperationException">
    /// The mapping is refused; the message is nats-server's reason (<c>invalid mapping destination: ...</c>,
    /// <c>duplicate entry for "x"</c>, <c>total weight needs to be &lt;= 100</c>, <c>invalid subject</c>).
    /// </exception>
    public void Validate() => SubjectMapping.Create(this);
}

/// <summary>One destination of a <see cref="MappingOptions"/>.</summary>
public sealed class MappingDestinationOptions
{
    /// <summary>The subject to publish to instead, with the source's wildcards and functions. Required.</summary>
    public string Subject { get; set; } = "";

    /// <summary>Percent of the publishes that take this destination, 0 to 100. Default 100.</summary>
    public int Weight { get; set; } = 100;

    /// <summary>
    /// The cluster the destination applies to (nats-server's cluster-scoped mappings). A destination with a cluster
    /// is checked but never taken: this broker is not part of a cluster. Default none.
    /// </summary>
    public string? Cluster { get; set; }

    /// <summary>Creates a copy.</summary>
    /// <returns>The copy.</returns>
    public MappingDestinationOptions Clone() => (MappingDestinationOptions)MemberwiseClone();
}
