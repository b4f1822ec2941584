using Broker.Abstractions;
using Broker.Samples.SampleStore;
using Broker.Storage.Conformance;
using Broker.Storage.MemStore;

namespace Broker.Storage.Tests;

/// <summary>The conformance suite over the memory store plugin.</summary>
public sealed class MemoryStoreConformance : StreamStoreConformanceTests
{
    protected override bool KeepsExpiredForMarker => true;

    protected override IStreamStoreProvider CreateProvider() => new MemoryStoreProvider();
}

/// <summary>The conformance suite over the sample third-party store.</summary>
public sealed class SampleStoreConformance : StreamStoreConformanceTests
{
    protected override bool KeepsExpiredForMarker => true;

    protected override IStreamStoreProvider CreateProvider() => new SampleStoreProvider();
}
