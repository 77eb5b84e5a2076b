// Stands in for the packages behind Pi's types that the extension never touches (the model
// providers' SDKs, the schema libraries): jsconfig.json maps them here, so that the type check
// reads Pi's extension API without them. Their types become `any`; with them the check read 1,691
// files instead of 582 and took four times as long (typebox's generics alone: 13 s of checking).
export {};
