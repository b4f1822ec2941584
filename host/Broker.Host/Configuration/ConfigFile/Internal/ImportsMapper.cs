using Broker.Core;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// An account's <c>exports</c> and <c>imports</c> (nats-server opts.go <c>parseAccountExports</c>,
/// <c>parseAccountImports</c>, <c>parseExportStreamOrService</c>, <c>parseImportStreamOrService</c>) onto
/// <see cref="AccountOptions.Exports"/> and <see cref="AccountOptions.Imports"/> keys, with nats-server's texts and
/// positions. A service export's <c>latency</c> is read and checked as nats-server reads it. The checks that
/// need every account (an exporter that exists and allows the import, cycles) run once the whole <c>accounts</c> block
/// is read and are reported at its key, as nats-server reports them.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class ImportsMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    private const string TokenPositions = "account token positions in exports";

    private readonly ServiceExportDirectives directives = new(output);

    /// <summary>Maps an account's <c>exports</c>, keeping what it read in <paramref name="account"/> for <see cref="Check"/>.</summary>
    public void Exports(ConfEntry field, string prefix, AccountOptions account)
    {
        if (field.Value is not ConfArray items)
        {
            output.Error(field.KeyPosition, $"Exports should be an array, got {GoType(field.Value)}");
            return;
        }

        foreach (var item in items.Items)
        {
            if (item is not ConfMap body)
            {
                output.Error(item.Position, $"Export Items should be a map with type entry, got {GoType(item)}");
                continue;
            }

            var (stream, service) = Export(body);
            if (stream is not null)
            {
                var key = $"{prefix}:{nameof(AccountExportOptions.Streams)}:{Format(account.Exports.Streams.Count)}";
                output.Set(key + ":" + nameof(StreamExportOptions.Subject), stream.Subject);
                SetNames(key + ":" + nameof(StreamExportOptions.Accounts), stream.Accounts);
                account.Exports.Streams.Add(stream);
            }

            if (service is not null)
            {
                var key = $"{prefix}:{nameof(AccountExportOptions.Services)}:{Format(account.Exports.Services.Count)}";
                output.Set(key + ":" + nameof(ServiceExportOptions.Subject), service.Subject);
                SetNames(key + ":" + nameof(ServiceExportOptions.Accounts), service.Accounts);
                output.Set(key + ":" + nameof(ServiceExportOptions.ResponseType), service.ResponseType.ToString());
                output.Set(key + ":" + nameof(ServiceExportOptions.ResponseThreshold), Format(service.ResponseThreshold));
                if (service.Latency is { } latency)
                {
                    output.Set($"{key}:{nameof(ServiceExportOptions.Latency)}:{nameof(ServiceLatencyOptions.Subject)}", latency.Subject);
                    output.Set($"{key}:{nameof(ServiceExportOptions.Latency)}:{nameof(ServiceLatencyOptions.Sampling)}", Format(latency.Sampling));
                }

                account.Exports.Services.Add(service);
            }
        }
    }

    /// <summary>Maps an account's <c>imports</c>, keeping what it read in <paramref name="account"/> for <see cref="Check"/>.</summary>
    public void Imports(ConfEntry field, string prefix, AccountOptions account)
    {
        if (field.Value is not ConfArray items)
        {
            output.Error(field.KeyPosition, $"Imports should be an array, got {GoType(field.Value)}");
            return;
        }

        foreach (var item in items.Items)
        {
            if (item is not ConfMap body)
            {
                output.Error(item.Position, $"Import Items should be a map with type entry, got {GoType(item)}");
                continue;
            }

            var (streamImport, serviceImport) = Import(body);
            if (serviceImport is not null)
            {
                if (account.Imports.Services.FirstOrDefault(i => (i.To ?? i.Subject) == (serviceImport.To ?? serviceImport.Subject)) is { } duplicate)
                {
                    output.Error(item.Position, $"Duplicate service import subject {Quote(serviceImport.To ?? serviceImport.Subject)}, previously used in import for account {Quote(duplicate.Account)}, subject {Quote(duplicate.Subject)}");
                    continue;
                }

                var key = $"{prefix}:{nameof(AccountImportOptions.Services)}:{Format(account.Imports.Services.Count)}";
                output.Set(key + ":" + nameof(ServiceImportOptions.Account), serviceImport.Account);
                output.Set(key + ":" + nameof(ServiceImportOptions.Subject), serviceImport.Subject);
                if (serviceImport.To is not null)
                {
                    output.Set(key + ":" + nameof(ServiceImportOptions.To), serviceImport.To);
                }

                output.Set(key + ":" + nameof(ServiceImportOptions.Share), serviceImport.Share ? "true" : "false");
                account.Imports.Services.Add(serviceImport);
            }

            if (streamImport is { } import)
            {
                var key = $"{prefix}:{nameof(AccountImportOptions.Streams)}:{Format(account.Imports.Streams.Count)}";
                output.Set(key + ":" + nameof(StreamImportOptions.Account), import.Account);
                output.Set(key + ":" + nameof(StreamImportOptions.Subject), import.Subject);
                if (import.Prefix is not null)
                {
                    output.Set(key + ":" + nameof(StreamImportOptions.Prefix), import.Prefix);
                }

                if (import.To is not null)
                {
                    output.Set(key + ":" + nameof(StreamImportOptions.To), import.To);
                }
                account.Imports.Streams.Add(import);
            }
        }
    }

    /// <summary>
    /// The checks across accounts, at the <c>accounts</c> key: the broker's own validation of the options, whose texts
    /// are nats-server's.
    /// </summary>
    public void Check(ConfPosition position, IList<AccountOptions> accounts)
    {
        if (!accounts.Any(a => a.Exports.Streams.Count > 0 || a.Imports.Streams.Count > 0 || a.Exports.Services.Count > 0 || a.Imports.Services.Count > 0))
        {
            return;
        }

        try
        {
            new BrokerOptions { Accounts = accounts }.Validate();
        }
        catch (InvalidOperationException ex)
        {
            output.Error(position, ex.Message);
        }
    }

    // nats-server parseExportStreamOrService: a stream or a service, with the keys each may have.
    private (StreamExportOptions? Stream, ServiceExportOptions? Service) Export(ConfMap body)
    {
        StreamExportOptions? stream = null;
        ServiceExportOptions? service = null;
        List<string>? accounts = null;
        ServiceResponseType? responseType = null;
        TimeSpan? threshold = null;
        ConfEntry? responseEntry = null;
        ConfEntry? latencyEntry = null;
        ServiceLatencyOptions? latency = null;
        foreach (var entry in body.Entries)
        {
            switch (entry.Key.ToLowerInvariant())
            {
                case "stream":
                    if (service is not null)
                    {
                        output.Error(entry.KeyPosition, $"Detected stream {GoQuoted(entry.Value)} but already saw a service");
                    }
                    else if (responseEntry is not null)
                    {
                        output.Error(responseEntry.KeyPosition, "Detected response directive on non-service");
                    }
                    else if (latencyEntry is not null)
                    {
                        output.Error(latencyEntry.KeyPosition, "Detected latency directive on non-service");
                    }
                    else if (entry.Value is ConfString text)
                    {
                        stream = new StreamExportOptions { Subject = text.Value, Accounts = accounts };
                    }
                    else
                    {
                        output.Error(entry.KeyPosition, $"Expected stream name to be string, got {GoType(entry.Value)}");
                    }

                    break;
                case "service":
                    if (stream is not null)
                    {
                        output.Error(entry.KeyPosition, $"Detected service {GoQuoted(entry.Value)} but already saw a stream");
                    }
                    else if (entry.Value is ConfString name)
                    {
                        service = new ServiceExportOptions { Subject = name.Value, Accounts = accounts };
                    }
                    else
                    {
                        output.Error(entry.KeyPosition, $"Expected service name to be string, got {GoType(entry.Value)}");
                    }

                    break;
                case "response" or "response_type":
                    if (responseEntry is not null)
                    {
                        output.Error(entry.KeyPosition, "Duplicate response type definition");
                        break;
                    }

                    responseEntry = entry;
                    responseType = directives.ResponseType(entry);
                    if (stream is not null)
                    {
                        output.Error(entry.KeyPosition, "Detected response directive on non-service");
                    }

                    break;
                case "threshold" or "response_threshold" or "response_max_time" or "response_time":
                    if (threshold is not null)
                    {
                        output.Error(entry.KeyPosition, "Duplicate response threshold detected");
                        break;
                    }

                    threshold = directives.Threshold(entry) ?? TimeSpan.Zero;
                    if (stream is not null)
                    {
                        output.Error(entry.KeyPosition, "Detected response directive on non-service");
                    }

                    break;
                case "accounts":
                    accounts = Names(entry);
                    if (stream is not null)
                    {
                        stream.Accounts = accounts;
                    }
                    else if (service is not null)
                    {
                        service.Accounts = accounts;
                    }

                    break;
                case "latency":
                    latencyEntry = entry;
                    latency = directives.Latency(entry);
                    if (latency is null)
                    {
                        break;
                    }

                    if (stream is not null)
                    {
                        output.Error(entry.KeyPosition, "Detected latency directive on non-service");
                    }

                    break;
                case "account_token_position":
                    reader.NotYet(entry, TokenPositions);
                    break;
                default:
                    reader.Unknown(entry);
                    break;
            }
        }

        if (service is not null)
        {
            service.ResponseType = responseType ?? ServiceResponseType.Singleton;
            if (threshold is { } value && value > TimeSpan.Zero)
            {
                service.ResponseThreshold = value;
            }

            service.Latency = latency;
        }

        return (stream, service);
    }

    private void SetNames(string key, IList<string>? names)
    {
        for (var i = 0; i < (names?.Count ?? 0); i++)
        {
            output.Set($"{key}:{Format(i)}", names![i]);
        }
    }

    private List<string>? Names(ConfEntry entry)
    {
        if (entry.Value is not ConfArray names)
        {
            reader.TypeError(entry.KeyPosition, entry.Value, "[]interface {}");
            return null;
        }

        var result = new List<string>();
        foreach (var name in names.Items)
        {
            if (name is not ConfString text)
            {
                reader.TypeError(entry.KeyPosition, name, "string");
                return null;
            }

            result.Add(text.Value);
        }

        return result;
    }

    // nats-server parseImportStreamOrService: a stream with prefix or to, or a service with to and share.
    private (StreamImportOptions? Stream, ServiceImportOptions? Service) Import(ConfMap body)
    {
        StreamImportOptions? stream = null;
        ServiceImportOptions? service = null;
        string? prefix = null;
        string? to = null;
        var share = false;
        foreach (var entry in body.Entries)
        {
            switch (entry.Key.ToLowerInvariant())
            {
                case "stream":
                    if (service is not null)
                    {
                        output.Error(entry.KeyPosition, "Detected stream but already saw a service");
                        break;
                    }

                    stream = Source(entry, "Stream") is var (streamAccount, streamSubject) ? new StreamImportOptions { Account = streamAccount, Subject = streamSubject } : null;
                    break;
                case "service":
                    if (stream is not null)
                    {
                        output.Error(entry.KeyPosition, "Detected service but already saw a stream");
                        break;
                    }

                    service = Source(entry, "Service") is var (serviceAccount, serviceSubject) ? new ServiceImportOptions { Account = serviceAccount, Subject = serviceSubject } : null;
                    break;
                case "prefix":
                    if (reader.TryString(entry, out var text))
                    {
                        prefix = text;
                    }

                    break;
                case "to":
                    if (reader.TryString(entry, out var target))
                    {
                        to = target;
                        if (stream is not null && !string.IsNullOrEmpty(prefix))
                        {
                            output.Error(entry.KeyPosition, "Stream import can not have a 'prefix' and a 'to' property");
                            return (null, null);
                        }
                    }

                    break;
                case "share":
                    reader.TryBool(entry, out share);
                    break;
                default:
                    reader.Unknown(entry);
                    break;
            }
        }

        if (service is not null)
        {
            service.To = string.IsNullOrEmpty(to) ? null : to;
            service.Share = share;
            return (null, service);
        }

        if (stream is null)
        {
            return (null, null);
        }

        // With both (possible when `to` came first), nats-server's import takes the prefix.
        stream.Prefix = string.IsNullOrEmpty(prefix) ? null : prefix;
        stream.To = stream.Prefix is null && !string.IsNullOrEmpty(to) ? to : null;
        return (stream, null);
    }

    // {account: A, subject: "x"} (nats-server parseAccount).
    private (string Account, string Subject)? Source(ConfEntry entry, string kind)
    {
        if (entry.Value is not ConfMap source)
        {
            output.Error(entry.KeyPosition, $"{kind} entry should be an account map, got {GoType(entry.Value)}");
            return null;
        }

        string? account = null;
        string? subject = null;
        foreach (var field in source.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "account":
                    account = reader.TryString(field, out var name) ? name : null;
                    break;
                case "subject":
                    subject = reader.TryString(field, out var text) ? text : null;
                    break;
                default:
                    reader.Unknown(field);
                    break;
            }
        }

        if (string.IsNullOrEmpty(account) || string.IsNullOrEmpty(subject))
        {
            output.Error(entry.KeyPosition, "Expect an account name and a subject");
            return null;
        }

        return (account, subject);
    }

    private static string Quote(string text) => GoQuoted(new ConfString(text, default));
}
