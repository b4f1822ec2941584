using Broker.Benchmarks.Delivery;

namespace Broker.Bench.Tests.Budgets;

/// <summary>The service-import benchmark really answers each request through the route back, so its budget means something.</summary>
public sealed class ServiceImportBenchmarkTests
{
    [Fact]
    public void Each_request_reaches_the_responder_and_its_response_the_requesters_inbox()
    {
        var benchmark = new ServiceImportBenchmarks();
        benchmark.Setup();
        try
        {
            var total = benchmark.RequestThroughServiceImport128();

            // Each response as MSG _INBOX.bench 1 128\r\n + payload + \r\n to the requester, plus one count per request
            // the responder got; no route is left waiting (each singleton route went with its response).
            Assert.Equal(ServiceImportBenchmarks.Batch * ("MSG _INBOX.bench 1 128\r\n".Length + 128 + 2 + 1), total);
            Assert.Equal(0, benchmark.WaitingRoutes());

            // The mapped case: the request reaches M's responder on the mapped subject, each response the inbox.
            Assert.Equal(total, benchmark.RequestThroughImportIntoMappings128());
            Assert.Equal(0, benchmark.WaitingRoutes());
            Assert.Equal("mapped.bench", benchmark.MappedRequestSubject());
        }
        finally
        {
            benchmark.Cleanup();
        }
    }
}
