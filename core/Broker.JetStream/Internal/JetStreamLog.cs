using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal;

/// <summary>JetStream's log lines (event ids 1000-1099, docs/logging.md), worded after nats-server's where it has one.</summary>
internal static partial class JetStreamLog
{
    [LoggerMessage(1000, LogLevel.Information, "Starting JetStream")]
    public static partial void Starting(ILogger logger);

    [LoggerMessage(1001, LogLevel.Information, "  Max Memory:      {MaxMemory}")]
    public static partial void MaxMemory(ILogger logger, string maxMemory);

    [LoggerMessage(1002, LogLevel.Information, "  Max Storage:     {MaxStorage}")]
    public static partial void MaxStorage(ILogger logger, string maxStorage);

    [LoggerMessage(1003, LogLevel.Information, "  Store Directory: \"{Directory}\"")]
    public static partial void StoreDirectory(ILogger logger, string directory);

    [LoggerMessage(1004, LogLevel.Information, "  Store types:     {Types}")]
    public static partial void StoreTypes(ILogger logger, string types);

    [LoggerMessage(1005, LogLevel.Warning, "JetStream has no storage plugin: streams cannot be created until one (for example Broker.Storage.MemStore) is loaded")]
    public static partial void NoStores(ILogger logger);

    /// <remarks>
    /// The counts are passed boxed: a log method's value-type parameters instantiate the logging framework's generic
    /// code over them (about 16 methods the JIT compiles at every restart, 2-3 ms of CPU), while three reference
    /// parameters share the code the start-up's other log lines already use. The line and its properties are the same:
    /// the logger boxes every value to format and capture it anyway (docs/benchmarks.md, "restart3").
    /// </remarks>
    public static void Recovered(ILogger logger, int streams, int consumers, string type) => RecoveredBoxed(logger, streams, consumers, type);

    [LoggerMessage(1006, LogLevel.Information, "Restored {Streams} stream(s) and {Consumers} consumer(s) of storage type {Type}")]
    private static partial void RecoveredBoxed(ILogger logger, object streams, object consumers, string type);

    [LoggerMessage(1007, LogLevel.Warning, "Stream '{Stream}' of storage type {Type} could not be restored: {Reason}")]
    public static partial void RecoveryFailed(ILogger logger, string stream, string type, string reason);

    [LoggerMessage(1008, LogLevel.Warning, "Stream create failed for '$G > {Stream}': {Reason}")]
    public static partial void StreamCreateFailed(ILogger logger, string stream, string reason);

    [LoggerMessage(1009, LogLevel.Error, "JetStream failed to store a msg on stream '$G > {Stream}': {Status}")]
    public static partial void StoreFailed(ILogger logger, string stream, string status);

    [LoggerMessage(1010, LogLevel.Error, "JetStream API request on {Subject} failed")]
    public static partial void ApiFailed(ILogger logger, string subject, Exception exception);

    [LoggerMessage(1012, LogLevel.Error, "JetStream consumer '$G > {Stream} > {Consumer}' delivery failed")]
    public static partial void DeliveryFailed(ILogger logger, string stream, string consumer, Exception exception);

    [LoggerMessage(1013, LogLevel.Warning, "JetStream consumer '$G > {Stream} > {Consumer}' bad NAK delay value: \"{Value}\"")]
    public static partial void BadNakDelay(ILogger logger, string stream, string consumer, string value);

    [LoggerMessage(1014, LogLevel.Error, "JetStream stream '$G > {Stream}' could not wait for durable storage")]
    public static partial void DurabilityFailed(ILogger logger, string stream, Exception exception);

    [LoggerMessage(1015, LogLevel.Error, "JetStream stopping stream '$G > {Stream}' failed")]
    public static partial void StopFailed(ILogger logger, string stream, Exception exception);

    [LoggerMessage(1016, LogLevel.Warning, "JetStream resource limits exceeded for server")]
    public static partial void ResourcesExceeded(ILogger logger);

    [LoggerMessage(1019, LogLevel.Information, "  Domain:          {Domain}")]
    public static partial void Domain(ILogger logger, string domain);

    [LoggerMessage(1020, LogLevel.Warning, "Skipping Default Domain \"{Domain}\", set for JetStream enabled account \"{Account}\"")]
    public static partial void SkippingDefaultDomain(ILogger logger, string domain, string account);

    [LoggerMessage(1021, LogLevel.Warning, "The option `default_js_domain` is a temporary backwards compatibility measure and will be removed")]
    public static partial void DefaultDomainDeprecated(ILogger logger);

    [LoggerMessage(1022, LogLevel.Information, "Adding default domain mapping \"{From}\" -> \"{To}\" to account \"{Account}\"")]
    public static partial void DefaultDomainMapping(ILogger logger, string from, string to, string account);

    [LoggerMessage(1018, LogLevel.Warning, "JetStream settings that change nothing on a single server, ignored: {Settings}")]
    public static partial void IgnoredSettings(ILogger logger, string settings);

    [LoggerMessage(1023, LogLevel.Error, "JetStream could not apply the accounts of a configuration reload")]
    public static partial void AccountsUpdateFailed(ILogger logger, Exception exception);

    /// <remarks>
    /// The threshold is passed boxed: as a <see cref="TimeSpan"/> parameter of the log method, the class's initialiser
    /// instantiated LoggerMessage.Define over it, JIT-compiled at every start where JetStream logs its first line
    /// (docs/benchmarks.md, "start7"). The line and its property are the same.
    /// </remarks>
    public static void InactiveDeleted(ILogger logger, string stream, string consumer, TimeSpan threshold) => InactiveDeletedBoxed(logger, stream, consumer, threshold);

    [LoggerMessage(1017, LogLevel.Debug, "JetStream consumer '$G > {Stream} > {Consumer}' deleted after {Threshold} without interest")]
    private static partial void InactiveDeletedBoxed(ILogger logger, string stream, string consumer, object threshold);

    [LoggerMessage(1024, LogLevel.Information, "Purge request for account {Account} (streams: {Streams}, hasAccount: {HasAccount})")]
    public static partial void AccountPurge(ILogger logger, string account, int streams, string hasAccount);

    [LoggerMessage(1030, LogLevel.Warning, "Error processing inbound {Kind} message for '{Account} > {Stream}': {Error}")]
    public static partial void SourceAppendFailed(ILogger logger, string kind, string account, string stream, string error);

    [LoggerMessage(1031, LogLevel.Warning, "JetStream error response for create {Kind} consumer: {Error}")]
    public static partial void SourceConsumerFailed(ILogger logger, string kind, string error);
}
